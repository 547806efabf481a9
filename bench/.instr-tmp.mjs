import { startReceiver } from '/work/main/bench/lib/receiver-client.mjs';
import { addWebhooks, makeEngine, EVENT_DATA, EVENT_TYPE } from '/work/main/bench/lib/engine.mjs';
import { preload } from '/work/main/bench/lib/preload.mjs';
import { openStore } from '/work/main/bench/lib/stores.mjs';
import { tempDir } from '/work/main/bench/lib/tmp.mjs';
const kind = process.argv[2] ?? 'sqlite';
const N = Number(process.argv[3] ?? 3000);
const fanout = Number(process.argv[4] ?? 1);
const receiver = await startReceiver();
const dir = tempDir('instr');
const raw = kind === 'sqlite' ? await openStore({ kind, dir: dir.path }) : await openStore({ kind, pgUrl: process.env.PGURL });
const stats = {};
const store = new Proxy(raw, { get(t, k) { const v = t[k]; if (typeof v !== 'function') return v; return async (...a) => { const t0 = performance.now(); try { return await v.apply(t, a); } finally { const s = (stats[k] ??= { n: 0, ms: 0, rows: 0 }); s.n++; s.ms += performance.now() - t0; if (k === 'claimDue') s.rows += a[0].limit; } }; } });
const hooks = await makeEngine({ store });
await hooks.start();
let groups = [];
if (fanout === 1) for (let i = 0; i < 10; i++) { const [w] = await addWebhooks(hooks, { count: 1, urls: receiver.urls, environment: `env${i}`, offset: i }); groups.push({ environment: `env${i}`, webhookIds: [w.id] }); }
else { const ws = await addWebhooks(hooks, { count: fanout, urls: receiver.urls }); groups.push({ environment: 'default', webhookIds: ws.map(w => w.id) }); }
await preload(raw, { groups, events: N / fanout, firstDueAt: Date.now() - N });
for (const k of Object.keys(stats)) delete stats[k];
const c0 = process.cpuUsage(); const t0 = performance.now(); hooks.wake(); await hooks.drain(); const s = (performance.now() - t0) / 1000;
const cu = process.cpuUsage(c0); console.log(kind, 'fanout', fanout, Math.round(N / s), '/s', 'cpu ms/delivery', ((cu.user + cu.system) / 1000 / N).toFixed(3));
for (const [k, v] of Object.entries(stats)) console.log(k, v.n, 'calls', (v.ms / v.n).toFixed(3), 'ms avg', k === 'claimDue' ? `avg limit ${(v.rows / v.n).toFixed(1)}` : '');
await hooks.close(); await receiver.stop(); dir.cleanup();
