/**
 * `iwr worker --queue <redis-url>`: takes experiment jobs from the two queues until told to
 * stop, on any machine that sees the coordinator's run folder at the same path.
 *
 * Before its first job of a run the worker plans the run itself, from the same config file
 * loaded the same way, and checks that its plan has the coordinator's run key and that the
 * run folder's run.json has it too. A mismatch (another folder mounted there, other task
 * files, another environment leaving an arm out) means this worker would write results the
 * coordinator does not expect: it refuses the job — puts it back untouched for another
 * worker — and stops, saying why.
 *
 * A job's work resumes on its own terms (a page made by the same request is kept, an
 * eval.json that scored the same page is kept), so a job taken up again after its worker
 * died (BullMQ's stalled-job check) redoes only what had not finished. A job that fails on
 * its last attempt leaves the cell's record, failed, with the error.
 *
 * Redis lost mid-run is reconnected to with a bounded back-off (RedisLink). Stopping while
 * Redis is down gives the jobs in progress a grace period for their work in the run folder,
 * then cancels them and closes at once (BullMQ's polite close would wait for Redis forever);
 * their jobs are taken up again once Redis is back. A Redis unreachable for
 * IWR_QUEUE_REDIS_GIVE_UP_MS stops the worker the same way, with an error (exit 3).
 */
import fs from "node:fs";
import os from "node:os";
import { DelayedError, type Job, Queue, UnrecoverableError, Worker } from "bullmq";
import { errorMessage, IwrError, toErrorRecord } from "../../errors.ts";
import { writeFileAtomic } from "../../files/atomic.ts";
import { redactString } from "../../log/redact.ts";
import { CellOutcomeSchema, type CellRecord, readCellRecord } from "../../results/cell-record.ts";
import { type CellRunner, openCellRunner } from "../cell-runner.ts";
import { loadExperimentConfig } from "../config.ts";
import { abandonedCellRecord, type ExperimentPlan, planExperiment } from "../plan.ts";
import { checkRedisReachable, queueErrorListener, RedisLink, redisGiveUpMs, settledWithin } from "./connection.ts";
import { type CellJob, CellJobSchema, cellJobId, cellJobOptions, EVALUATE_QUEUE, GENERATE_QUEUE } from "./jobs.ts";

export interface QueueWorkerOptions {
  queueUrl: string;
  /** Generation jobs at once (model-bound). */
  generate: number;
  /** Evaluation jobs at once (each replays a page in a browser). */
  evaluate: number;
  /** How long a job stays locked to a silent worker before another takes it up (BullMQ's lockDuration). */
  stallMs: number;
  cacheDir?: string;
  statesCacheDir?: string;
  /** A line for the person running the worker (job started, finished, refused). */
  say: (line: string) => void;
  /** How long a Redis lost mid-run is waited for (default: redisGiveUpMs(), from IWR_QUEUE_REDIS_GIVE_UP_MS). */
  redisGiveUpMs?: number;
  /** Stopping while Redis is down: how long jobs in progress may take to finish before they are cancelled (default 5 s). */
  stopGraceMs?: number;
}

export type WorkerStop = { reason: "stopped" } | { reason: "refused"; message: string };
type Stop = WorkerStop | { reason: "redis lost"; error: unknown };

interface RunContext {
  plan: ExperimentPlan;
  runner: CellRunner;
}

/**
 * Why this worker cannot work for the job's run, or undefined when it can. "stale": this
 * machine's plan and run.json agree with each other but not with the job, so the job is left
 * from an earlier config of this run folder (its coordinator was stopped and the config
 * edited): it is dropped. "refuse": this machine sees another folder, or other inputs.
 */
function mismatchOf(job: CellJob, plan: ExperimentPlan): { kind: "stale" | "refuse"; message: string } | undefined {
  if (plan.files.dir !== job.runDir) return { kind: "refuse", message: `the config plans its run in ${plan.files.dir}, the job's run folder is ${job.runDir}` };
  let recorded: unknown;
  try {
    recorded = (JSON.parse(fs.readFileSync(plan.files.record, "utf8")) as { runKey?: unknown }).runKey;
  } catch (error) {
    return {
      kind: "refuse",
      message:
        `this machine cannot read ${plan.files.record} (${(error as NodeJS.ErrnoException).code ?? errorMessage(error)}): ` +
        "it does not see the coordinator's run folder",
    };
  }
  if (plan.runKey !== job.runKey && recorded === plan.runKey) {
    return {
      kind: "stale",
      message: `the job is left from an earlier run of ${job.runDir} (run key ${job.runKey.slice(0, 16)}; the folder's run is now ${plan.runKey.slice(0, 16)})`,
    };
  }
  if (plan.runKey !== job.runKey)
    return {
      kind: "refuse",
      message:
        `this worker plans config ${job.config.file} with run key ${plan.runKey.slice(0, 16)}, the coordinator's is ${job.runKey.slice(0, 16)} ` +
        "(the config, the task files, the prompts or the model settings differ on this machine)",
    };
  if (recorded !== job.runKey)
    return {
      kind: "refuse",
      message:
        `${plan.files.record} on this machine has run key ${String(recorded).slice(0, 16)}, the coordinator's is ${job.runKey.slice(0, 16)}: ` +
        "this is not the coordinator's run folder",
    };
  return undefined;
}

class RefusedJob extends Error {
  constructor(
    readonly kind: "stale" | "refuse",
    message: string,
  ) {
    super(message);
  }
}

/** What BullMQ keeps in Redis as a job's failedReason and stack: the error with any key-like text redacted. */
function redactedError(error: unknown): Error {
  const redacted = new Error(redactString(errorMessage(error)));
  redacted.stack = redactString(error instanceof Error && error.stack ? error.stack : redacted.message);
  return redacted;
}

export class QueueWorker {
  private readonly options: QueueWorkerOptions;
  private readonly contexts = new Map<string, Promise<RunContext>>();
  private readonly controller = new AbortController();
  private workers: Worker[] = [];
  private evaluateQueue: Queue | undefined;
  /** The job functions running now, for a stop while Redis is down to wait for. */
  private readonly running = new Set<Promise<unknown>>();
  private stopped: ((stop: Stop) => void) | undefined;
  private readonly done: Promise<Stop>;

  constructor(options: QueueWorkerOptions) {
    this.options = options;
    this.done = new Promise((resolve) => (this.stopped = resolve));
  }

  /** Connects and takes jobs; resolves when the worker has stopped (`stop()`, or a refused job). */
  async run(): Promise<WorkerStop> {
    const giveUpMs = this.options.redisGiveUpMs ?? redisGiveUpMs();
    await checkRedisReachable(this.options.queueUrl);
    const link = new RedisLink(this.options.queueUrl, {
      giveUpMs,
      say: this.options.say,
      afterGiveUp:
        "This worker stops: the cells it finished are kept in their run folder, its unfinished jobs are taken up again once Redis is back, " +
        "and a coordinator that stopped too resumes the run when run again.",
    });
    link.lost.catch((error: unknown) => this.stopped?.({ reason: "redis lost", error }));
    const connection = link.options;
    this.evaluateQueue = new Queue(EVALUATE_QUEUE, { connection });
    this.evaluateQueue.on("error", queueErrorListener("queue", this.options.say));
    // Named so each job records which worker ran it (BullMQ processedBy).
    const common = {
      connection,
      name: `${os.hostname()}:${process.pid}`,
      lockDuration: this.options.stallMs,
      stalledInterval: this.options.stallMs,
      maxStalledCount: 2,
    };
    this.workers = [
      new Worker(GENERATE_QUEUE, (job: Job, token?: string) => this.track(this.generateJob(job, token)), { ...common, concurrency: this.options.generate }),
      new Worker(EVALUATE_QUEUE, (job: Job, token?: string) => this.track(this.evaluateJob(job, token)), { ...common, concurrency: this.options.evaluate }),
    ];
    for (const worker of this.workers) worker.on("error", queueErrorListener("worker", this.options.say));
    this.options.say(
      `worker ${process.pid}: taking jobs from ${GENERATE_QUEUE} (${this.options.generate} at once) and ${EVALUATE_QUEUE} (${this.options.evaluate} at once)`,
    );
    const stop = await this.done;
    await this.close(link);
    if (stop.reason === "redis lost") throw stop.error;
    return stop;
  }

  /** Stops taking jobs; the ones in progress finish first (while Redis is down, for a grace period). */
  stop(): void {
    this.stopped?.({ reason: "stopped" });
  }

  private track<T>(job: Promise<T>): Promise<T> {
    this.running.add(job);
    const untrack = () => void this.running.delete(job);
    job.then(untrack, untrack);
    return job;
  }

  private async close(link: RedisLink): Promise<void> {
    // While Redis answers, jobs in progress finish as they would have (an agent is not cut short into a failed cell), and the queue hears of it.
    const closing = link.down ? undefined : Promise.all(this.workers.map((worker) => worker.close()));
    const closed = closing !== undefined && (await Promise.race([closing.then(() => true), link.untilDown().then(() => false)]));
    if (!closed) {
      // Redis is gone, and BullMQ's polite close would wait for it forever. Jobs in progress get the grace period to finish
      // their work in the run folder; then they are cancelled, and the connections dropped. Their jobs' locks expire, so the
      // queue hands them out again once Redis is back (a finished cell's record is kept by the job run again).
      const graceMs = this.options.stopGraceMs ?? 5_000;
      if (this.running.size > 0)
        this.options.say(`Redis is unreachable: ${this.running.size} job(s) in progress get ${graceMs / 1000} s to finish, then this worker stops`);
      await settledWithin(Promise.allSettled([...this.running]), graceMs);
      this.controller.abort();
      // A forced close drops the connections at once; after a polite close began, only a disconnect does.
      await Promise.all(
        this.workers.map(async (worker) => (await settledWithin(worker.close(true), 2_000)) || (await settledWithin(worker.disconnect(), 300))),
      );
    }
    link.close();
    this.controller.abort();
    if (this.evaluateQueue && (link.down || !(await settledWithin(this.evaluateQueue.close(), 3_000))))
      await settledWithin(this.evaluateQueue.disconnect(), 300);
    for (const context of this.contexts.values()) await (await context.catch(() => undefined))?.runner.close();
  }

  /** The job's run, planned here and checked against the coordinator's; refuses (puts the job back) on a mismatch. */
  private async contextFor(job: Job, token: string | undefined): Promise<{ data: CellJob; context: RunContext }> {
    const data = CellJobSchema.parse(job.data);
    const id = `${data.runKey}:${data.runDir}`;
    if (!this.contexts.has(id)) {
      this.contexts.set(
        id,
        (async () => {
          const config = loadExperimentConfig(data.config.file, { ...data.config });
          const plan = await planExperiment(config);
          const mismatch = mismatchOf(data, plan);
          if (mismatch) throw new RefusedJob(mismatch.kind, mismatch.message);
          const runner = await openCellRunner(plan, {
            signal: this.controller.signal,
            evaluatorWorkers: this.options.evaluate,
            ...(this.options.cacheDir ? { cacheDir: this.options.cacheDir } : {}),
            ...(this.options.statesCacheDir ? { statesCacheDir: this.options.statesCacheDir } : {}),
          });
          return { plan, runner };
        })(),
      );
    }
    try {
      return { data, context: await this.contexts.get(id)! };
    } catch (error) {
      this.contexts.delete(id);
      if (error instanceof RefusedJob && error.kind === "stale") {
        this.options.say(`dropped ${data.label}: ${error.message}`);
        throw new UnrecoverableError(`dropped: ${error.message}`);
      }
      const message = error instanceof RefusedJob ? error.message : `cannot plan the job's run from ${data.config.file}: ${errorMessage(error)}`;
      // Back to the queue untouched (no attempt used) for a worker that sees the right folder.
      await job.moveToDelayed(Date.now() + 2000, token);
      this.options.say(`refused ${data.label}: ${message}; nothing was written. This worker stops.`);
      this.stopped?.({ reason: "refused", message });
      throw new DelayedError();
    }
  }

  private isLastAttempt(job: Job): boolean {
    return job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
  }

  /** The cell's record written since the coordinator queued it (by an earlier run of this job, or the coordinator), if any. */
  private newerRecord(plan: ExperimentPlan, data: CellJob): CellRecord | undefined {
    const record = readCellRecord(plan.files.cellRecord(plan.cells.get(data.cellKey)!.dir));
    return record?.cellKey === data.cellKey && record.finishedAt !== data.recordBefore ? record : undefined;
  }

  /** Writes the cell's record unless one was written since the cell was queued: a job run twice leaves one result. */
  private async writeRecord(plan: ExperimentPlan, data: CellJob, record: CellRecord): Promise<boolean> {
    if (this.newerRecord(plan, data)) {
      this.options.say(`${data.label}: a record was written meanwhile; it is kept`);
      return false;
    }
    await writeFileAtomic(plan.files.cellRecord(plan.cells.get(data.cellKey)!.dir), `${redactString(JSON.stringify(record, null, 2))}\n`);
    return true;
  }

  private async generateJob(job: Job, token: string | undefined): Promise<{ status: string }> {
    const { data, context } = await this.contextFor(job, token);
    const { plan, runner } = context;
    if (this.newerRecord(plan, data)) return { status: "finished already" };
    this.options.say(`generate ${data.label}: started`);
    try {
      const produced = await runner.generate(data.cellKey);
      const evaluateId = cellJobId(data.runKey, data.runDir, data.cellKey);
      // Job data lives in Redis: its text redacted like every record's (a model's error message may quote a key).
      // Values only: the record's own field names (inputTokens…) are not secrets.
      const redacted = CellOutcomeSchema.parse(JSON.parse(redactString(JSON.stringify(produced))));
      await this.evaluateQueue!.add("evaluate", { ...data, produced: redacted }, cellJobOptions(evaluateId, job.opts.attempts ?? 1));
      this.options.say(`generate ${data.label}: ${produced.status}`);
      return { status: produced.status };
    } catch (error) {
      this.options.say(`generate ${data.label}: error (attempt ${job.attemptsMade + 1} of ${job.opts.attempts ?? 1}): ${redactString(errorMessage(error))}`);
      if (this.isLastAttempt(job))
        await this.writeRecord(plan, data, abandonedCellRecord(data.cellKey, plan.cells.get(data.cellKey)!, "generate", toErrorRecord(error)));
      throw redactedError(error);
    }
  }

  private async evaluateJob(job: Job, token: string | undefined): Promise<{ status: string }> {
    const { data, context } = await this.contextFor(job, token);
    const { plan, runner } = context;
    if (!data.produced) throw new IwrError("QUEUE", `evaluate job ${job.id} carries no generation outcome`);
    // A job run twice leaves one result: the record of the first stands.
    if (this.newerRecord(plan, data)) return { status: "finished already" };
    this.options.say(`evaluate ${data.label}: started`);
    try {
      const record = await runner.evaluateProduced(data.cellKey, data.produced);
      if (!(await this.writeRecord(plan, data, record))) return { status: "finished already" };
      this.options.say(
        `evaluate ${data.label}: ${record.status}${record.evaluation.final !== undefined ? `, Final ${(record.evaluation.final * 100).toFixed(1)} %` : ""}`,
      );
      return { status: record.status };
    } catch (error) {
      this.options.say(`evaluate ${data.label}: error (attempt ${job.attemptsMade + 1} of ${job.opts.attempts ?? 1}): ${redactString(errorMessage(error))}`);
      if (this.isLastAttempt(job))
        await this.writeRecord(plan, data, abandonedCellRecord(data.cellKey, plan.cells.get(data.cellKey)!, "evaluate", toErrorRecord(error), data.produced));
      throw redactedError(error);
    }
  }
}
