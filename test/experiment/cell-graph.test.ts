/**
 * The experiment's cell graph (agents/experiment) with its work given as plain functions:
 * which nodes run for which cell, what reaches state, and that a graph invoked by the
 * generator runs as a root run of its own (its own checkpointer and thread), not as a
 * subgraph of the cell. Also a module arm that exports a compiled LangGraph graph.
 */
import fs from "node:fs";
import path from "node:path";
import { END, MemorySaver, START, StateGraph, StateSchema } from "@langchain/langgraph";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { buildCellGraph, type CellWork } from "../../agents/experiment/graph.ts";
import { loadModuleGenerator } from "../../src/experiment/module-arm.ts";
import { NO_USAGE } from "../../src/models/index.ts";
import { tempDir } from "../support/evaluator-replay-fixtures.ts";

const dir = tempDir("cell-graph");
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function recordingWork(options: { iterations?: number; selfCheck?: boolean; generate?: () => Promise<void> } = {}) {
  const calls: string[] = [];
  const work: CellWork = {
    async generate(key) {
      calls.push(`generate ${key}`);
      await options.generate?.();
      const iterations = Array.from({ length: options.iterations ?? 0 }, (_, draft) => ({
        draft,
        round: draft,
        dir: `/d/${draft}`,
        selfScore: 0.5 + draft / 10,
      }));
      return { status: "made", usage: NO_USAGE, wallMs: 1, ...(iterations.length > 0 ? { iterations } : {}) };
    },
    async evaluate(key, draft) {
      calls.push(draft ? `evaluate ${key} draft ${draft.draft}` : `evaluate ${key}`);
      return { status: "evaluated", final: draft ? 0.1 * (draft.draft + 1) : 0.9, ifs: 1, wallMs: 1 };
    },
    ...(options.selfCheck
      ? {
          selfCheck: async (key: string) => {
            calls.push(`self-check ${key}`);
            return { selfScore: 0.7, wallMs: 1 };
          },
        }
      : {}),
  };
  return { work, calls };
}

describe("the cell graph", () => {
  const graph = buildCellGraph();
  it("generates then evaluates a cell, and stops there when nothing else is asked", async () => {
    const { work, calls } = recordingWork();
    const values = await graph.invoke({ cellKey: "c1" }, { context: { work } });
    expect(calls).toEqual(["generate c1", "evaluate c1"]);
    expect(values.evaluation?.final).toBe(0.9);
    expect(values.iterations).toEqual([]);
    expect(values.selfCheck).toBeUndefined();
  });
  it("after the page, scores every saved draft and self-checks the page when asked", async () => {
    const { work, calls } = recordingWork({ iterations: 2, selfCheck: true });
    const values = await graph.invoke({ cellKey: "c2" }, { context: { work } });
    expect(calls[0]).toBe("generate c2");
    expect([...calls.slice(1)].sort()).toEqual(["evaluate c2", "evaluate c2 draft 0", "evaluate c2 draft 1", "self-check c2"]);
    expect(values.iterations).toEqual([
      { draft: 0, round: 0, selfScore: 0.5, final: 0.1 },
      { draft: 1, round: 1, selfScore: 0.6, final: 0.2 },
    ]);
    expect(values.selfCheck).toEqual({ selfScore: 0.7, wallMs: 1 });
  });
  it("runs the page's evaluation, the drafts' scoring and the self-check side by side, not one after another", async () => {
    // Each branch waits until all three have started: run one after another, they would never finish.
    const started = new Set<string>();
    let release: () => void = () => undefined;
    const allStarted = new Promise<void>((resolve) => (release = resolve));
    const branch = async (name: string) => {
      started.add(name);
      if (started.size === 3) release();
      await Promise.race([allStarted, new Promise((_, reject) => setTimeout(() => reject(new Error(`${name} ran alone: ${[...started].join(", ")}`)), 5000))]);
    };
    const { work } = recordingWork({ iterations: 1, selfCheck: true });
    const sideBySide: CellWork = {
      ...work,
      evaluate: async (key, draft) => {
        await branch(draft ? "draft" : "page");
        return work.evaluate(key, draft);
      },
      selfCheck: async (key) => {
        await branch("self-check");
        return work.selfCheck!(key);
      },
    };
    const values = await graph.invoke({ cellKey: "c5" }, { context: { work: sideBySide } });
    expect(values.evaluation?.final).toBe(0.9);
    expect(values.iterations).toHaveLength(1);
    expect(values.selfCheck?.selfScore).toBe(0.7);
  });
  it("runs a graph the generator invokes as a root run with its own checkpointer and thread", async () => {
    const Inner = new StateSchema({ count: z.number().default(0) });
    const saver = new MemorySaver();
    const inner = new StateGraph(Inner)
      .addNode("step", (state: { count: number }) => ({ count: state.count + 1 }))
      .addEdge(START, "step")
      .addEdge("step", END)
      .compile({ checkpointer: saver });
    let innerState: unknown;
    const { work } = recordingWork({
      generate: async () => {
        await inner.invoke({ count: 41 }, { configurable: { thread_id: "inner" } });
        innerState = (await inner.getState({ configurable: { thread_id: "inner" } })).values;
      },
    });
    await graph.invoke({ cellKey: "c3" }, { context: { work } });
    expect(innerState).toEqual({ count: 42 });
  });
  it("refuses to run without its work", async () => {
    await expect(graph.invoke({ cellKey: "c4" })).rejects.toThrow(/without its context|expected the cell's work/);
  });
});

describe("a module arm", () => {
  it("takes a compiled LangGraph graph exported as `graph`, invoked with the task's inputs", async () => {
    const file = path.join(dir, "graph-arm.ts");
    fs.writeFileSync(
      file,
      `import { StateGraph, StateSchema, START, END } from "@langchain/langgraph";
import { z } from "zod";
const State = new StateSchema({ inputs: z.object({ id: z.number() }).passthrough(), html: z.string().optional() });
export const graph = new StateGraph(State)
  .addNode("write", (state) => ({ html: "<p>task " + state.inputs.id + "</p>" }))
  .addEdge(START, "write").addEdge("write", END).compile();
`,
    );
    const generate = await loadModuleGenerator(file, "arms[0].kind");
    const controller = new AbortController();
    const html = await generate({ id: 7 } as never, { outputDir: dir, assetsBase: "assets", repeat: 0, signal: controller.signal, log: () => undefined });
    expect(html).toBe("<p>task 7</p>");
  });
});
