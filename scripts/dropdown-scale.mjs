// Measures big-account dropdowns (docs/options.md): the cold first page and a search of the
// device dropdown of an account with 100,000 devices, and of the group dropdown of a menu with
// 20,000 groups, plus a deep `GET /v1/devices` page. Not a test and not the official bench:
// a quick, noisy measurement on the current build (run `npm run build` first).
//
//   node scripts/dropdown-scale.mjs                 # SQLite at /tmp/dropdown-scale.db
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node scripts/dropdown-scale.mjs
//
// The dataset is imported once (SQLite file / PostgreSQL schema `dropdown_scale`) and reused;
// `--reimport` imports it again. Every scenario runs in a fresh child process, so the
// connector's caches are cold; each prints its time, the longest event-loop stall and peak RSS.
import { spawnSync } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const root = new URL('..', import.meta.url);
const dist = (path) => new URL(`dist/src/${path}`, root).href;
const url = process.env.DATABASE_URL;
const sqlitePath = process.env.SCALE_DB ?? '/tmp/dropdown-scale.db';
const schema = 'dropdown_scale';
const key = 'sk_scale_0123456789abcdef0123456789';
const menuId = 'scale-menu-1';
const deviceCount = Number(process.env.SCALE_DEVICES ?? 100_000);

async function open() {
  const { openDatabase } = await import(dist('db/database.js'));
  return openDatabase(url ? { url, schema, timeoutMs: 600_000 } : { path: sqlitePath, timeoutMs: 600_000 });
}

const words = ['Screen', 'Café board', 'lobby', 'ÉCRAN', 'Menu board', 'drive-thru', 'Patio', 'Kitchen', 'Señal', 'Zeta'];

function dataset() {
  const ts = (i) => new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString();
  const devices = Array.from({ length: deviceCount }, (_, i) => ({
    id: `02:5c:${(i >>> 24).toString(16).padStart(2, '0')}:${((i >>> 16) & 255).toString(16).padStart(2, '0')}:${((i >>> 8) & 255).toString(16).padStart(2, '0')}:${(i & 255).toString(16).padStart(2, '0')}`,
    name: `${words[(i * 7) % words.length]} ${(i * 7919) % 50_000}`,
    timezone: 'Europe/Paris',
    screen_resolution: '1920x1080',
    screen_orientation: 'normal',
    registered_at: ts(i),
    last_heartbeat_at: 'now-30s',
    offline_startup: false,
    offline_startup_delay_minutes: 0,
    open_dev_tools: false,
    display_connected: true,
    connection_type: 'ethernet',
    updated_at: ts(i),
    created_at: ts(i),
    access: [{ user_id: 'usr_scale', level: 'read' }],
  }));
  // 100 top groups of 199 children each: 20,000 groups.
  const groups = Array.from({ length: 100 }, (_, t) => ({
    id: `g-${t}`,
    name: `${words[t % words.length]} section ${t}`,
    groups: Array.from({ length: 199 }, (_, c) => ({ id: `g-${t}-${c}`, name: `Sub ${c} ${words[c % words.length]}`, tags: ['x'] })),
  }));
  return {
    accounts: [{ id: 'acc_scale', name: 'Scale account' }],
    users: [{ id: 'usr_scale', account_id: 'acc_scale', name: 'Scale user' }],
    api_keys: [{ id: 'key_scale', user_id: 'usr_scale', name: 'Scale', scopes: ['device:read', 'menu:read'], key }],
    devices,
    menus: [{ id: menuId, account_id: 'acc_scale', name: 'Scale menu', groups }],
  };
}

async function setup(force) {
  const db = await open();
  const have = await db.kysely
    .selectFrom('device_access')
    .where('user_id', '=', 'usr_scale')
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirst();
  if (!force && Number(have?.n ?? 0) === deviceCount) {
    await db.close();
    return;
  }
  const { importDataset } = await import(dist('dataset/import.js'));
  const started = performance.now();
  await importDataset(db, dataset(), { nowMs: Date.now() });
  console.log(`imported ${deviceCount} devices + 20,000 groups in ${Math.round(performance.now() - started)} ms`);
  await db.close();
}

const scenarios = {
  'devices first page': `/v1/devices/options?limit=50`,
  'devices q=cafe': `/v1/devices/options?q=cafe&limit=50`,
  'devices q=écran 12': `/v1/devices/options?q=${encodeURIComponent('écran 12')}&limit=50`,
  'devices whole list': `/v1/devices/options`,
  'groups first page': `/v1/menus/${menuId}/groups/options?limit=50`,
  'groups q=sub 12': `/v1/menus/${menuId}/groups/options?q=sub%2012&limit=50`,
  'groups tree top': `/v1/menus/${menuId}/groups/options?format=tree&limit=50`,
  'GET /devices page 900': `/devices?page=900&page_size=100`,
};

/** One scenario in this (fresh) process: the cold request, then the same again and page 2. */
async function one(name) {
  const { loadConfig } = await import(dist('config.js'));
  const { createLogger } = await import(dist('logger.js'));
  const { buildServices } = await import(dist('services.js'));
  const { createApp } = await import(dist('app.js'));
  const config = loadConfig({ LOG_LEVEL: 'silent', DATABASE_PATH: sqlitePath, CONNECTOR_SECRET: 'ab'.repeat(32), ...(url ? { DATABASE_URL: url } : {}) });
  const db = await open();
  const services = buildServices({ config, logger: createLogger('silent'), clock: { now: () => Date.now() }, db });
  const server = createApp(services).listen(0);
  await new Promise((resolve) => server.once('listening', resolve));
  const base = `http://127.0.0.1:${server.address().port}`;
  const path = scenarios[name];
  const auth = path.startsWith('/devices?') ? { Authorization: `Bearer ${key}` } : { 'X-API-Key': key };
  const stalls = monitorEventLoopDelay({ resolution: 5 });
  stalls.enable();
  const timed = async (p) => {
    const started = performance.now();
    const res = await fetch(base + p, { headers: auth });
    const body = await res.arrayBuffer();
    return {
      ms: performance.now() - started,
      status: res.status,
      total: res.headers.get('x-total-count'),
      link: res.headers.get('link'),
      bytes: body.byteLength,
    };
  };
  const cold = await timed(path);
  const warm = await timed(path);
  const next = cold.link ? await timed(new URL(/<([^>]+)>/.exec(cold.link)[1]).pathname + new URL(/<([^>]+)>/.exec(cold.link)[1]).search) : null;
  stalls.disable();
  server.close();
  await db.close();
  const rssMb = Math.round(process.resourceUsage().maxRSS / 1024);
  const row = [
    name.padEnd(22),
    `${cold.status}`,
    `cold ${cold.ms.toFixed(0).padStart(5)} ms`,
    `warm ${warm.ms.toFixed(1).padStart(6)} ms`,
    next ? `next ${next.ms.toFixed(1).padStart(6)} ms` : 'next      -   ',
    `total ${String(cold.total ?? '-').padStart(6)}`,
    `max stall ${(stalls.max / 1e6).toFixed(0).padStart(4)} ms`,
    `rss ${rssMb} MB`,
  ];
  console.log(row.join('  '));
}

const [mode, arg] = process.argv.slice(2);
if (mode === 'one') await one(arg);
else {
  await setup(mode === '--reimport');
  console.log(`engine: ${url ? 'postgres' : 'sqlite'}; ${deviceCount} devices; cold = fresh process`);
  for (const name of Object.keys(scenarios)) {
    spawnSync(process.execPath, [fileURLToPath(import.meta.url), 'one', name], { stdio: 'inherit', env: process.env });
  }
}
