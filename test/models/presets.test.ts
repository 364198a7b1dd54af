/** Model settings: the shipped presets, lookup by name or file, and precise errors. */
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { IwrError } from "../../src/errors.ts";
import { listModelPresets, loadModelSpec, resolveBaseURL } from "../../src/models/index.ts";
import { tempDir } from "./helpers.ts";

const scratch = tempDir("presets");
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

function writeYaml(name: string, text: string): string {
  const file = path.join(scratch, name);
  fs.writeFileSync(file, text);
  return file;
}

function errorOf(run: () => unknown): IwrError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(IwrError);
    return error as IwrError;
  }
  throw new Error("expected an IwrError");
}

describe("model presets", () => {
  it("ship every family of the leaderboard, each valid and within the protocol's ranges", () => {
    const presets = listModelPresets();
    const names = presets.map((preset) => preset.name);
    for (const family of ["gpt-5", "gpt-4.1", "gpt-4o", "claude-sonnet-4", "claude-opus-4", "qwen3-vl", "qwen2.5-vl-72b", "qwen2.5-vl-7b", "local"]) {
      expect(names).toContain(family);
    }
    const specs = presets.map((preset) => loadModelSpec(preset.file, {}, { env: {} }));
    for (const spec of specs) {
      expect([16_384, 4_096]).toContain(spec.maxTokens);
      expect([70, 20]).toContain(spec.maxImages);
      expect([64, 20]).toContain(spec.maxFrames);
      expect(spec.timeoutMs).toBeGreaterThanOrEqual(300_000);
      expect(spec.timeoutMs).toBeLessThanOrEqual(600_000);
    }
    expect(
      specs
        .filter((spec) => spec.maxImageSide === 1000)
        .map((spec) => spec.name)
        .sort(),
    ).toEqual(["claude-opus-4", "claude-sonnet-4"]);
  });

  it("finds a preset by name regardless of case", () => {
    const spec = loadModelSpec("Qwen2.5-VL-7B");
    expect(spec).toMatchObject({ name: "qwen2.5-vl-7b", maxTokens: 4096, maxImages: 20, maxFrames: 20, temperature: 0, maxRetries: 2 });
    expect(loadModelSpec("GPT-5").temperature).toBeNull();
  });

  it("gives the defaults to a model name it has no preset for", () => {
    const spec = loadModelSpec("some-lab/new-vl-model", { concurrency: 1 });
    expect(spec).toMatchObject({
      name: "some-lab/new-vl-model",
      apiKeyEnv: "OPENAI_API_KEY",
      baseURLEnv: "OPENAI_BASE_URL",
      maxTokens: 16_384,
      concurrency: 1,
    });
    expect(resolveBaseURL(spec, {})).toBe("https://api.openai.com/v1");
    expect(resolveBaseURL(spec, { OPENAI_BASE_URL: "http://127.0.0.1:4000/v1" })).toBe("http://127.0.0.1:4000/v1");
  });

  it("reads a YAML file; overrides win, and an override left undefined does not reset a value", () => {
    const file = writeYaml("mine.yaml", "name: my-judge\nmaxTokens: 2048\ntimeoutMs: 90000\n");
    const spec = loadModelSpec(file, { timeoutMs: 5000, maxTokens: undefined });
    expect(spec).toMatchObject({ name: "my-judge", maxTokens: 2048, timeoutMs: 5000 });
  });

  it("takes the local preset's endpoint and model from the environment, with defaults", () => {
    expect(loadModelSpec("local", {}, { env: {} })).toMatchObject({ baseURL: "http://127.0.0.1:8000/v1", apiModel: "Qwen/Qwen2.5-VL-7B-Instruct" });
    const ollama = loadModelSpec("local", {}, { env: { IWR_LOCAL_BASE_URL: "http://127.0.0.1:11434/v1", IWR_LOCAL_MODEL: "qwen2.5vl:7b" } });
    expect(ollama).toMatchObject({ baseURL: "http://127.0.0.1:11434/v1", apiModel: "qwen2.5vl:7b" });
  });

  it("names file, line, field, expectation and found value for bad settings", () => {
    const file = writeYaml("bad.yaml", "name: broken\nmaxTokens: lots\nmax_tokens: 5\npricing:\n  inputPerMillion: -1\n");
    const error = errorOf(() => loadModelSpec(file));
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.message).toContain(`${file}:2:12: maxTokens: expected number, got 'lots'`);
    expect(error.message).toContain(`${file}:3:13: unexpected key 'max_tokens'`);
    expect(error.message).toContain(`${file}:5:20: pricing.inputPerMillion: expected a value at least 0, got -1`);
  });

  it("names an unset environment variable a file refers to", () => {
    const file = writeYaml("env.yaml", "name: gateway-model\nbaseURL: ${IWR_TEST_SURELY_UNSET_URL}\n");
    expect(errorOf(() => loadModelSpec(file, {}, { env: {} })).message).toBe(
      `${file}:2:10: baseURL: environment variable IWR_TEST_SURELY_UNSET_URL is not set (set it, or give a default with \${IWR_TEST_SURELY_UNSET_URL:-value})`,
    );
  });

  it("asks for the endpoint variable a spec names when it is unset", () => {
    const spec = loadModelSpec("custom-endpoint-model", { baseURLEnv: "IWR_TEST_GATEWAY_URL" });
    expect(errorOf(() => resolveBaseURL(spec, {})).message).toContain("has no endpoint: set IWR_TEST_GATEWAY_URL");
  });
});
