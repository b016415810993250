// BullMQ's side of bench/peers: one queue, one worker (concurrency 100) with a no-op processor, jobs added
// with removeOnComplete, in this one process. It measures what bench/run measures for Conveyor and prints one
// JSON line: {"jobs","seconds","tps","p50Ms","p95Ms","p99Ms","failed","perJob":{"redisCpuUs","redisCommands"}}.
//   --redis URL        the Redis (a private one: the queue's keys are deleted at the end)
//   --jobs N           jobs measured (default 20000)
//   --rate R           add R jobs a second at a steady pace; without it, as fast as possible
//   --concurrency C    without --rate: the most adds awaiting their reply at once (default 2000, as bench/run)
//   --workers W        the worker's concurrency (default 100)
//   --warmup N         run N jobs the same way first, unmeasured (default 0)
// A job's latency is its worker's 'completed' event (in this process) minus the moment its add was called.
import { Queue, Worker } from 'bullmq';
import IORedis from 'ioredis';

const opts = { redis: 'redis://127.0.0.1:6379', jobs: 20000, rate: 0, concurrency: 2000, workers: 100, warmup: 0 };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i += 2) {
  const key = argv[i].replace(/^--/, '');
  if (!(key in opts) || argv[i + 1] === undefined) {
    console.error(`bullmq.mjs: unknown or incomplete option ${argv[i]}`);
    process.exit(2);
  }
  opts[key] = key === 'redis' ? argv[i + 1] : Number(argv[i + 1]);
  if (key !== 'redis' && !(Number.isInteger(opts[key]) && opts[key] >= 0)) {
    console.error(`bullmq.mjs: ${argv[i]} wants a whole number, got ${argv[i + 1]}`);
    process.exit(2);
  }
}

const connection = () => new IORedis(opts.redis, { maxRetriesPerRequest: null });
const name = `peers-${process.pid}-${Date.now().toString(36)}`;
const queue = new Queue(name, { connection: connection() });
const started = new Map();
let onDone = null;
const latencies = [];
let failed = 0;
let measuring = false;

const worker = new Worker(name, async () => null, { connection: connection(), concurrency: opts.workers });
worker.on('completed', (job) => settle(job.id, true));
worker.on('failed', (job) => settle(job.id, false));
await worker.waitUntilReady();

function settle(id, ok) {
  const t0 = started.get(id);
  if (t0 === undefined) {
    return; // its add has not replied yet: it is settled when it does (below)
  }
  started.delete(id);
  if (measuring) {
    latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (!ok) failed++;
  }
  onDone();
}

// The add's reply and the completion can come in either order: the job id is ours, so the start time is
// known before the add is sent.
let seq = 0;
function add() {
  const id = `j${seq++}`;
  started.set(id, process.hrtime.bigint());
  return queue.add('noop', { n: seq }, { jobId: id, removeOnComplete: true, removeOnFail: true }).catch(() => {
    started.delete(id);
    failed++;
    onDone();
  });
}

async function run(n) {
  let finished = 0;
  const all = new Promise((resolve) => {
    onDone = () => { if (++finished === n) resolve(); };
  });
  const begin = process.hrtime.bigint();
  if (opts.rate > 0) {
    for (let i = 0; i < n; i++) {
      const due = begin + BigInt(Math.round((i * 1e9) / opts.rate));
      const wait = Number(due - process.hrtime.bigint()) / 1e6;
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      add();
    }
  } else {
    let inFlight = 0;
    let wake = null;
    for (let i = 0; i < n; i++) {
      while (inFlight >= opts.concurrency) await new Promise((r) => { wake = r; });
      inFlight++;
      add().finally(() => { inFlight--; if (wake) { const w = wake; wake = null; w(); } });
    }
  }
  await all;
  return Number(process.hrtime.bigint() - begin) / 1e9;
}

async function redisInfo(conn) {
  const text = await conn.info();
  const field = (k) => Number((text.match(new RegExp(`^${k}:(\\S+)`, 'm')) || [])[1]);
  return { cpu: field('used_cpu_user') + field('used_cpu_sys'), commands: field('total_commands_processed') };
}

const probe = connection();
if (opts.warmup > 0) {
  await run(opts.warmup);
  await new Promise((r) => setTimeout(r, 1000));
}
const before = await redisInfo(probe);
measuring = true;
const seconds = await run(opts.jobs);
measuring = false;
const after = await redisInfo(probe);
latencies.sort((a, b) => a - b);
const pct = (p) => latencies.length ? latencies[Math.max(0, Math.ceil((p / 100) * latencies.length) - 1)] : null;
const round3 = (x) => Math.round(x * 1000) / 1000;
console.log(JSON.stringify({
  jobs: opts.jobs, seconds: round3(seconds), tps: round3(opts.jobs / seconds),
  p50Ms: round3(pct(50)), p95Ms: round3(pct(95)), p99Ms: round3(pct(99)), failed,
  perJob: {
    redisCpuUs: Math.round(((after.cpu - before.cpu) * 1e6) / opts.jobs),
    redisCommands: round3((after.commands - before.commands) / opts.jobs),
  },
}));
await worker.close();
await queue.obliterate({ force: true });
await queue.close();
await probe.quit();
process.exit(0);
