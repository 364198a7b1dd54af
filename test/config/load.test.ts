import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { loadYamlConfig, parseYamlConfig } from "../../src/config/load.ts";
import { IwrError } from "../../src/errors.ts";

const ExperimentSchema = z.object({
  name: z.string(),
  model: z.object({
    name: z.string(),
    baseURL: z.string().optional(),
    temperature: z.number().min(0).max(2).default(0),
    maxTokens: z.number().int().positive().optional(),
  }),
  headless: z.boolean().default(true),
  tasks: z.array(z.object({ file: z.string(), ids: z.array(z.number()).optional() })),
});

function configError(run: () => unknown): IwrError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(IwrError);
    expect((error as IwrError).code).toBe("CONFIG_INVALID");
    return error as IwrError;
  }
  throw new Error("expected a CONFIG_INVALID error");
}

let dir: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "iwr-config-"));
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe("loadYamlConfig", () => {
  it("reads a file, interpolates ${VAR} and applies schema defaults", async () => {
    const file = path.join(dir, "ok.yaml");
    await fs.writeFile(
      file,
      [
        "name: smoke ${RUN_TAG}",
        "model:",
        "  name: ${MODEL_NAME}",
        "  baseURL: http://${HOST:-127.0.0.1}:${PORT:-8080}/v1",
        "  maxTokens: ${MAX_TOKENS:-4096}",
        "tasks:",
        "  - file: tasks/iwr-mini.jsonl",
        "    ids: [1, 2]",
        "",
      ].join("\n"),
    );
    const config = loadYamlConfig(file, ExperimentSchema, { env: { RUN_TAG: "a1", MODEL_NAME: "gpt-4o", PORT: "9999" } });
    expect(config).toEqual({
      name: "smoke a1",
      model: { name: "gpt-4o", baseURL: "http://127.0.0.1:9999/v1", temperature: 0, maxTokens: 4096 },
      headless: true,
      tasks: [{ file: "tasks/iwr-mini.jsonl", ids: [1, 2] }],
    });
  });

  it("uses the default for an empty variable, keeps quoted values strings, and reads $${ as a literal", () => {
    const Schema = z.object({ a: z.string(), b: z.string(), c: z.boolean(), d: z.string() });
    const text = 'a: ${EMPTY:-fallback}\nb: "${COUNT}"\nc: ${FLAG:-false}\nd: cost $${PRICE}\n';
    expect(parseYamlConfig(text, Schema, "inline.yaml", { env: { EMPTY: "", COUNT: "12" } })).toEqual({
      a: "fallback",
      b: "12",
      c: false,
      d: "cost ${PRICE}",
    });
  });

  it("names the file, line, key path and variable when a variable is unset", () => {
    const text = "name: x\nmodel:\n  name: gpt\n  baseURL: ${OPENAI_BASE}/v1\ntasks:\n  - file: ${TASK_FILE}\n";
    const error = configError(() => parseYamlConfig(text, ExperimentSchema, "configs/exp.yaml", { env: {} }));
    expect(error.message.split("\n")).toEqual([
      "configs/exp.yaml: 2 problems",
      "configs/exp.yaml:4:12: model.baseURL: environment variable OPENAI_BASE is not set (set it, or give a default with ${OPENAI_BASE:-value})",
      "configs/exp.yaml:6:11: tasks[0].file: environment variable TASK_FILE is not set (set it, or give a default with ${TASK_FILE:-value})",
    ]);
  });

  it("rejects a malformed reference", () => {
    const error = configError(() => parseYamlConfig("name: ${1BAD}\n", z.object({ name: z.string() }), "c.yaml", { env: {} }));
    expect(error.message).toBe("c.yaml:1:7: name: '${1BAD}' is not a variable reference: write ${NAME} or ${NAME:-default}");
  });

  it("reports YAML syntax errors with file:line:col", async () => {
    const file = path.join(dir, "bad.yaml");
    await fs.writeFile(file, "name: x\nmodel:\n  name: [gpt\n  temperature: 0\n");
    const error = configError(() => loadYamlConfig(file, ExperimentSchema));
    expect(error.message).toMatch(new RegExp(`^${file.replace(/[.]/g, "\\.")}:\\d+:\\d+: YAML syntax error: .+`));
    expect(error.message).not.toContain(" at line ");
  });

  it("reports schema errors with file:line:col, key path, expected and found", () => {
    const text = ["name: x", "model:", "  name: gpt", "  temperature: hot", "headless: 3", "tasks:", "  - ids: [1, two]", ""].join("\n");
    const error = configError(() => parseYamlConfig(text, ExperimentSchema, "configs/exp.yaml", { env: {} }));
    expect(error.message.split("\n")).toEqual([
      "configs/exp.yaml: 4 problems",
      "configs/exp.yaml:4:16: model.temperature: expected number, got 'hot'",
      "configs/exp.yaml:5:11: headless: expected boolean, got 3",
      "configs/exp.yaml:7:5: tasks[0].file: expected string, got nothing (the field is missing)",
      "configs/exp.yaml:7:14: tasks[0].ids[1]: expected number, got 'two'",
    ]);
    expect(error.details.problems).toHaveLength(4);
  });

  it("says so when a value is out of range or the file is missing or empty", async () => {
    const tooHot = configError(() => parseYamlConfig("name: x\nmodel: { name: m, temperature: 5 }\ntasks: []\n", ExperimentSchema, "t.yaml"));
    expect(tooHot.message).toBe("t.yaml:2:32: model.temperature: expected a value at most 2, got 5");
    const missing = path.join(dir, "absent.yaml");
    expect(configError(() => loadYamlConfig(missing, ExperimentSchema)).message).toBe(`${missing}: cannot read the config: file not found`);
    expect(configError(() => parseYamlConfig("# only a comment\n", ExperimentSchema, "e.yaml")).message).toBe(
      "e.yaml: the file is empty (expected a YAML mapping)",
    );
  });
});
