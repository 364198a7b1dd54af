/**
 * `iwr run <config> --queue <redis-url>`: the coordinator. It plans the run as an
 * in-process run does, writes run.json, queues a generation job for every cell that is not
 * finished, and waits while workers (`iwr worker`, on this machine or others sharing the
 * run folder) do them. The run folder is the truth: a cell is done when its cell.json
 * carries its key. The coordinator only writes a cell's record itself when its job gave up
 * without one (a worker died on the job more often than the stalled-job check allows).
 * It returns the same summary as an in-process run, so the same report follows.
 *
 * Stopping the coordinator (SIGINT) stops the waiting, not the work: queued jobs stay, and
 * running the coordinator again collects what the workers finished meanwhile. That holds
 * while Redis is down too: every wait on Redis is raced against the stop and against
 * RedisLink giving up on a Redis lost for IWR_QUEUE_REDIS_GIVE_UP_MS, which ends the run
 * with an error (exit 3) saying the finished cells are kept and a rerun resumes.
 */
import { type Job, Queue } from "bullmq";
import { writeFileAtomic } from "../../files/atomic.ts";
import { lockFolder } from "../../files/folder-lock.ts";
import { redactString } from "../../log/redact.ts";
import { type CellRecord, readCellRecord } from "../../results/cell-record.ts";
import { RUN_LOCK } from "../../results/layout.ts";
import { CellTally } from "../cell-tally.ts";
import type { ExperimentConfig } from "../config.ts";
import { abandonedCellRecord, type ExperimentPlan, planExperiment, preflightModels, writeRunRecord } from "../plan.ts";
import { type RunEvent, type RunSummary, summaryOf } from "../run.ts";
import { checkRedisReachable, displayRedisURL, queueErrorListener, RedisLink, redisGiveUpMs, settledWithin } from "./connection.ts";
import { type CellJob, cellJobId, cellJobOptions, EVALUATE_QUEUE, GENERATE_QUEUE } from "./jobs.ts";

export interface QueueRunOptions {
  queueUrl: string;
  retryErrors?: boolean;
  /** Tries per job before its cell is recorded as failed (default 3). */
  attempts?: number;
  onEvent?: (event: RunEvent) => void;
  /** A line for the person waiting (no worker yet, what is queued). */
  say?: (line: string) => void;
  /** Stops the waiting (the jobs stay queued). */
  signal?: AbortSignal;
  /** How often the run folder and the queues are looked at (default 500 ms). */
  pollMs?: number;
  /** How long a Redis lost mid-run is waited for (default: redisGiveUpMs(), from IWR_QUEUE_REDIS_GIVE_UP_MS). */
  redisGiveUpMs?: number;
}

const UNFINISHED_STATES = new Set(["waiting", "active", "delayed", "prioritized", "waiting-children"]);

const recordFileOf = (plan: ExperimentPlan, key: string) => plan.files.cellRecord(plan.cells.get(key)!.dir);

function labelOf(plan: ExperimentPlan, key: string): string {
  const cell = plan.cells.get(key)!;
  return `task ${cell.task.id} × ${cell.arm.name} r${cell.repeat}`;
}

/** The job's state, or "missing" when the queue has no such job. */
async function stateOf(queue: Queue, id: string): Promise<{ state: string; job?: Job }> {
  const job = await queue.getJob(id);
  return job ? { state: await job.getState(), job } : { state: "missing" };
}

export async function runExperimentOnQueue(config: ExperimentConfig, options: QueueRunOptions): Promise<RunSummary> {
  const started = Date.now();
  const giveUpMs = options.redisGiveUpMs ?? redisGiveUpMs();
  await checkRedisReachable(options.queueUrl);
  const plan = await planExperiment(config);
  // The coordinator holds the run folder for its workers: another coordinator or an in-process run on it is refused.
  const lock = lockFolder(plan.files.dir, { name: RUN_LOCK, command: `iwr run ${config.file} --queue`, what: "run folder" });
  try {
    return await coordinate(plan, config, { ...options, redisGiveUpMs: giveUpMs }, started);
  } finally {
    lock.release();
  }
}

async function coordinate(plan: ExperimentPlan, config: ExperimentConfig, options: QueueRunOptions, started: number): Promise<RunSummary> {
  const say = options.say ?? (() => {});
  // What each unfinished cell's folder holds now (a failed record being retried, or nothing): a
  // record with another finishedAt is the new one. Read in the same pass as the finished ones,
  // so a worker finishing a cell meanwhile is seen either way.
  const previous = new Map<string, string | undefined>();
  const tally = new CellTally(plan, plan.order, {
    ...options,
    onUnfinished: (key) => previous.set(key, readCellRecord(recordFileOf(plan, key))?.finishedAt),
  });
  const { pending } = tally;
  await writeRunRecord(plan);
  options.onEvent?.({ type: "start", cells: plan.order.length, pending: pending.length, runDir: plan.files.dir });
  if (pending.length === 0) return summaryOf(plan, plan.order, tally.records, tally.skipped);
  await preflightModels(plan, pending);

  const link = new RedisLink(options.queueUrl, {
    giveUpMs: options.redisGiveUpMs ?? redisGiveUpMs(),
    say,
    afterGiveUp:
      `The coordinator stops: the cells finished so far are kept in ${plan.files.dir}, ` +
      `and once Redis is back, iwr run ${config.file} --queue ${displayRedisURL(options.queueUrl)} resumes the run from them.`,
  });
  const connection = link.options;
  const generateQueue = new Queue(GENERATE_QUEUE, { connection });
  const evaluateQueue = new Queue(EVALUATE_QUEUE, { connection });
  for (const queue of [generateQueue, evaluateQueue]) queue.on("error", queueErrorListener("queue", say));
  const attempts = options.attempts ?? 3;
  const idOf = (key: string) => cellJobId(plan.runKey, plan.files.dir, key);
  const newRecord = (key: string) => {
    const record = readCellRecord(recordFileOf(plan, key));
    return record?.cellKey === key && record.finishedAt !== previous.get(key) ? record : undefined;
  };
  /** Both jobs' states, generation first: it adds the evaluation job before it completes. */
  const statesOf = async (key: string) => ({ generate: await stateOf(generateQueue, idOf(key)), evaluate: await stateOf(evaluateQueue, idOf(key)) });
  const enqueue = async (key: string, jobs: Awaited<ReturnType<typeof statesOf>>) => {
    await jobs.evaluate.job?.remove();
    await jobs.generate.job?.remove();
    const recordBefore = previous.get(key);
    const data: CellJob = {
      runDir: plan.files.dir,
      runKey: plan.runKey,
      cellKey: key,
      config: config.loadedWith,
      ...(recordBefore ? { recordBefore } : {}),
      label: labelOf(plan, key),
    };
    await generateQueue.add("generate", data, cellJobOptions(idOf(key), attempts));
  };
  const requeued = new Set<string>();
  // Set once the coordinator stops waiting: a wait() still blocked on Redis does nothing more when it wakes.
  let over = false;
  const wait = async () => {
    for (const key of pending) {
      const jobs = await statesOf(key);
      if (over) return;
      // A job of this cell still under way (an earlier coordinator queued it): wait for it.
      if (UNFINISHED_STATES.has(jobs.generate.state) || UNFINISHED_STATES.has(jobs.evaluate.state)) continue;
      // Jobs that ended without leaving the record wanted: queue the cell afresh.
      if (!newRecord(key)) await enqueue(key, jobs);
    }
    say(
      `queued ${pending.length} cell(s) on ${displayRedisURL(options.queueUrl)} (${GENERATE_QUEUE}, then ${EVALUATE_QUEUE}); ` +
        `waiting for workers (iwr worker --queue ${displayRedisURL(options.queueUrl)}) that see ${plan.files.dir}`,
    );

    const outstanding = new Set(pending);
    let lastStateCheck = 0;
    let warnedNoWorker = false;
    const note = (key: string, record: CellRecord) => {
      outstanding.delete(key);
      tally.note(key, record);
    };
    const abandon = async (key: string, stage: "generate" | "evaluate", message: string, produced?: CellJob["produced"]) => {
      const record = abandonedCellRecord(key, plan.cells.get(key)!, stage, { code: "QUEUE", message }, produced);
      await writeFileAtomic(recordFileOf(plan, key), `${redactString(JSON.stringify(record, null, 2))}\n`);
      note(key, record);
    };
    while (outstanding.size > 0 && !options.signal?.aborted && !over) {
      for (const key of [...outstanding]) {
        const record = newRecord(key);
        if (record) note(key, record);
      }
      if (outstanding.size > 0 && Date.now() - lastStateCheck > 2000) {
        lastStateCheck = Date.now();
        for (const key of [...outstanding]) {
          const jobs = await statesOf(key);
          if (over) return;
          if (UNFINISHED_STATES.has(jobs.generate.state) || UNFINISHED_STATES.has(jobs.evaluate.state)) continue;
          // Read after the states: a job that completed has written its record first.
          const record = newRecord(key);
          if (record) {
            note(key, record);
            continue;
          }
          const failedJob =
            jobs.evaluate.state === "failed"
              ? { stage: "evaluate" as const, job: jobs.evaluate.job! }
              : jobs.generate.state === "failed"
                ? { stage: "generate" as const, job: jobs.generate.job! }
                : undefined;
          // A job that gave up without a record (its worker died too often): the cell fails with the queue's reason.
          if (failedJob)
            await abandon(
              key,
              failedJob.stage,
              `the ${failedJob.stage} job failed ${failedJob.job.attemptsMade} time(s): ${failedJob.job.failedReason}`,
              (failedJob.job.data as CellJob).produced,
            );
          // Jobs done (or gone) and still no record here: queued once more, then the cell fails saying why.
          else if (!requeued.has(key)) {
            requeued.add(key);
            await enqueue(key, jobs);
          } else {
            await abandon(
              key,
              "evaluate",
              `its jobs ended twice without a record in ${plan.files.dir}: a worker wrote elsewhere or its queue entries were removed ` +
                "(does every worker see this run folder at this path?)",
            );
          }
        }
        if (!warnedNoWorker && Date.now() - started > 5000) {
          // CLIENT LIST, which a managed Redis may refuse: then no hint, nothing else changes.
          const workers = await Promise.all([generateQueue.getWorkers(), evaluateQueue.getWorkers()])
            .then(([a, b]) => a.length + b.length)
            .catch(() => undefined);
          if (workers === 0) {
            warnedNoWorker = true;
            say(`no worker is connected yet: start one with iwr worker --queue ${displayRedisURL(options.queueUrl)} on a machine that sees ${plan.files.dir}`);
          }
        }
      }
      if (outstanding.size > 0) await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 500));
    }
  };
  // BullMQ's calls wait for a lost Redis forever: the waiting ends on a stop signal, or with link.lost's error once Redis is given up on.
  const stopped = new Promise<void>((resolve) => {
    if (options.signal?.aborted) resolve();
    options.signal?.addEventListener("abort", () => resolve(), { once: true });
  });
  try {
    await Promise.race([wait(), stopped, link.lost]);
  } finally {
    over = true;
    link.close();
    await Promise.all([generateQueue, evaluateQueue].map((queue) => closeQueue(queue, link.down)));
  }
  return summaryOf(plan, plan.order, tally.records, tally.skipped);
}

/**
 * Closes a queue's connection: politely while Redis answers (given 3 s), else at once (a
 * polite close waits for a lost Redis forever; the queued jobs are in Redis either way).
 */
async function closeQueue(queue: Queue, redisDown: boolean): Promise<void> {
  if (!redisDown && (await settledWithin(queue.close(), 3_000))) return;
  await settledWithin(queue.disconnect(), 300);
}
