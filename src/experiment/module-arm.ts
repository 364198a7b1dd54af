/**
 * Loading a `module:<path>` arm's generator (a JavaScript or TypeScript module) and
 * taking the page out of its reply. The contract is agents/module-contract.ts.
 */
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { GeneratorContext, GeneratorReply, PageGenerator } from "../../agents/module-contract.ts";
import { errorMessage, IwrError } from "../errors.ts";
import type { TaskInputs } from "../tasks/inputs.ts";

interface InvokableGraph {
  invoke(input: { inputs: TaskInputs }, config: { context: GeneratorContext; signal: AbortSignal }): Promise<unknown>;
}

const isGraph = (value: unknown): value is InvokableGraph =>
  typeof value === "object" && value !== null && "invoke" in value && typeof (value as { invoke: unknown }).invoke === "function";

/** Imports the module and finds its generator; throws IwrError("CONFIG_INVALID") saying what it exports instead. */
export async function loadModuleGenerator(file: string, where: string): Promise<PageGenerator> {
  let exported: Record<string, unknown>;
  try {
    exported = (await import(pathToFileURL(path.resolve(file)).href)) as Record<string, unknown>;
  } catch (error) {
    throw new IwrError("CONFIG_INVALID", `${where}: module ${file} cannot be loaded: ${errorMessage(error)}`, { file });
  }
  const candidate = exported.generate ?? exported.default ?? exported.graph;
  if (typeof candidate === "function") return candidate as PageGenerator;
  if (isGraph(candidate)) {
    return async (inputs, context) => {
      const state = await candidate.invoke({ inputs }, { context, signal: context.signal });
      const html = state && typeof state === "object" && "html" in state ? (state as { html: unknown }).html : undefined;
      if (typeof html !== "string") throw new IwrError("MODEL_REPLY", `the graph exported by ${file} returned a state without an html string`);
      return html;
    };
  }
  const names = Object.keys(exported);
  throw new IwrError(
    "CONFIG_INVALID",
    `${where}: module ${file} exports no generator: expected a function 'generate' (or a default export) or a compiled LangGraph graph 'graph'; ` +
      `it exports ${names.length > 0 ? names.join(", ") : "nothing"}`,
    { file },
  );
}

/** The page in a generator's reply; a reply without one is the generator's failure, recorded in the cell. */
export function pageOfReply(reply: GeneratorReply, file: string): string {
  const html = typeof reply === "string" ? reply : reply && typeof reply === "object" ? reply.html : undefined;
  if (typeof html !== "string" || !/<[A-Za-z!]/.test(html)) {
    throw new IwrError("MODEL_REPLY", `the generator in ${file} returned no HTML (expected a string or { html })`);
  }
  return html;
}
