/** preflightModel: one clear error about the key or the endpoint before any work starts. */
import net from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { IwrError } from "../../src/errors.ts";
import { preflightModel } from "../../src/models/index.ts";
import { type FakeOpenAIServer, startOpenAIServer } from "../support/openai-server.ts";
import { specFor, TEST_KEY, TEST_KEY_ENV } from "./helpers.ts";

const started: FakeOpenAIServer[] = [];
async function server(options: Parameters<typeof startOpenAIServer>[0] = {}): Promise<FakeOpenAIServer> {
  const running = await startOpenAIServer(options);
  started.push(running);
  return running;
}

async function preflightError(run: Promise<void>): Promise<IwrError> {
  const error: unknown = await run.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(IwrError);
  expect((error as IwrError).code).toBe("MODEL");
  return error as IwrError;
}

/** A loopback port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

beforeAll(() => {
  process.env[TEST_KEY_ENV] = TEST_KEY;
});
afterAll(() => {
  delete process.env[TEST_KEY_ENV];
});
afterEach(async () => {
  await Promise.all(started.splice(0).map((running) => running.close()));
});

describe("preflightModel", () => {
  it("passes for a reachable endpoint, sending the key to GET /models", async () => {
    const endpoint = await server({ models: ["gpt-4o"] });
    await preflightModel(specFor(endpoint.baseURL));
    expect(endpoint.requests.map((request) => `${request.method} ${request.path}`)).toEqual(["GET /v1/models"]);
    expect(endpoint.requests[0]?.headers.authorization).toBe(`Bearer ${TEST_KEY}`);
  });

  it("names the missing key variable for a remote endpoint, before any request", async () => {
    const spec = specFor("https://models.example.invalid/v1", { apiKeyEnv: "IWR_TEST_UNSET_KEY_VARIABLE" });
    const error = await preflightError(preflightModel(spec));
    expect(error.message).toBe(
      "model 'gpt-4o' needs an API key for https://models.example.invalid/v1: set the environment variable IWR_TEST_UNSET_KEY_VARIABLE " +
        "(or set apiKeyEnv: none for an endpoint that takes no key)",
    );
  });

  it("lets a loopback endpoint go without a key, and sends none", async () => {
    const endpoint = await server();
    await preflightModel(specFor(endpoint.baseURL, { apiKeyEnv: "IWR_TEST_UNSET_KEY_VARIABLE" }));
    expect(endpoint.requests[0]?.headers.authorization).toBeUndefined();
  });

  it("treats 404 on /models as reachable", async () => {
    const endpoint = await server({ modelsEndpoint: 404 });
    await expect(preflightModel(specFor(endpoint.baseURL))).resolves.toBeUndefined();
  });

  it("reports a refused key (401)", async () => {
    const endpoint = await server({ modelsEndpoint: 401 });
    const error = await preflightError(preflightModel(specFor(endpoint.baseURL)));
    expect(error.message).toContain(`refused the API key from ${TEST_KEY_ENV} (HTTP 401)`);
  });

  it("reports an endpoint nobody listens on, and one that never answers", async () => {
    const port = await closedPort();
    const refused = await preflightError(preflightModel(specFor(`http://127.0.0.1:${port}/v1`)));
    expect(refused.message).toMatch(
      new RegExp(
        `endpoint http://127.0.0.1:${port}/v1 is not reachable \\(.*ECONNREFUSED.*\\); is the server running, and is baseURL in the model settings right\\?`,
      ),
    );

    const silent = await server({ modelsEndpoint: "hang" });
    const hung = await preflightError(preflightModel(specFor(silent.baseURL), { timeoutMs: 300 }));
    expect(hung.message).toContain("is not reachable (no answer within 300 ms)");
  });
});
