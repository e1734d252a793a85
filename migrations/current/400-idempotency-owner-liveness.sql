-- Idempotency: a claim whose first call is gone answers idempotency_outcome_unknown.
--
-- A claim is committed as 'running' before its write starts, so a process killed mid-write
-- used to leave it running, and every retry answered idempotency_in_progress for 24 hours.
-- Whether the first call is still alive must be visible to the retry's backend, and the API
-- roles cannot read other sessions in pg_stat_activity. So the connection that claims a key
-- holds a session-level advisory lock on it from its claim until its write has committed or
-- rolled back (src/http/idempotency.ts runs claim, write and unlock on that one connection,
-- and destroys the connection whenever it cannot be sure the lock is gone). The lock dies with
-- the backend. A retry that finds the claim running and can take the lock knows the first
-- call is gone; so does one that finds the claim older than a statement may run (the
-- connection's statement_timeout): its backend can outlive its process (it notices a dead
-- client only when it next talks to it), or the connection can hang half-open. Either way the
-- claim becomes 'failed' — idempotency_outcome_unknown — for the rest of its 24 h.
--
-- Advisory locks share one key space per database. Ours are single bigints named
-- hashtextextended('svc.<topic>:' || ids, 0) (contacts_add_tag takes 'svc.tags:<org>' for a
-- transaction); graphile-migrate holds its own while migrating, on owner connections. Another
-- topic takes another prefix, so keys meet only by a 64-bit hash collision, which makes a
-- claim wait for the other holder, or a retry answer in_progress until the time limit. A
-- session-level lock taken on a request connection must be released before that connection
-- goes back to the pool, as it would otherwise outlive the request.

set local role svc_owner;

create or replace function app_private.idempotency_lock_key(credential_id uuid, operation_id text, key text)
returns bigint language sql immutable parallel safe as $$
  -- operation ids hold no ':', so the parts cannot run into each other
  select hashtextextended('svc.idempotency:' || credential_id::text || ':' || operation_id || ':' || key, 0)
$$;
comment on function app_private.idempotency_lock_key(uuid, text, text) is
  'Advisory-lock key held by the connection running the first call of (credential, operation, idempotency key).';
revoke execute on function app_private.idempotency_lock_key(uuid, text, text) from public;

-- Its result gains lock_key and settled, which create or replace cannot do.
drop function if exists app_hidden.idempotency_begin(text, text, text, timestamptz);

-- Starts a call, or answers for it:
--   lock_key set: the caller claimed the key and now holds that session-level advisory lock;
--     it runs the write, then unlocks;
--   response_status and response_body set: the stored first answer;
--   settled: the first call was found gone and is now recorded as unknown (committed, so that
--     it stays so); calling again answers with that 409;
--   otherwise a 409 is raised.
-- `at` is the caller's clock, so tests can move it.
create function app_hidden.idempotency_begin(operation_id text, key text, fingerprint text, at timestamptz,
  out response_status int, out response_body jsonb, out lock_key bigint, out settled boolean)
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  r app_private.idempotency_keys;
  cred uuid := app_hidden.current_credential_id();
  lock bigint;
  -- a write runs as one statement right after its claim; 0 (no limit) leaves only the lock
  run_limit interval := nullif((select s.setting::bigint from pg_catalog.pg_settings s where s.name = 'statement_timeout'), 0)
    * interval '1 millisecond';
begin
  if cred is null then
    perform app_hidden.raise_error(401, 'unauthorized', 'Invalid API key');
  end if;
  lock := app_private.idempotency_lock_key(cred, idempotency_begin.operation_id, idempotency_begin.key);
  settled := false;
  loop
    insert into app_private.idempotency_keys as k
      (credential_id, operation_id, key, organization_id, fingerprint, state, created_at)
    values (cred, idempotency_begin.operation_id, idempotency_begin.key, app_hidden.current_org_id(),
            idempotency_begin.fingerprint, 'running', at)
    on conflict on constraint idempotency_keys_pkey do update
       set fingerprint = excluded.fingerprint, state = 'running', response_status = null,
           response_body = null, created_at = excluded.created_at, updated_at = now()
     where k.created_at <= excluded.created_at - interval '24 hours'
    returning * into r;
    if found then
      -- A new call (or an expired key started over). The lock is taken before the claim
      -- commits, so no one sees it running without its owner's lock. It is free unless a
      -- colliding key's call holds it; then this waits for that call.
      perform pg_advisory_lock(lock);
      lock_key := lock;
      return;
    end if;
    -- ON CONFLICT locked the existing row even though it did not update it: until this
    -- transaction ends, its first call can neither record its answer nor free the key.
    select * into r from app_private.idempotency_keys k
     where k.credential_id = cred and k.operation_id = idempotency_begin.operation_id and k.key = idempotency_begin.key;
    exit when found;
    -- the first call rolled back and freed the key between the two statements: claim it
  end loop;
  if r.fingerprint <> idempotency_begin.fingerprint then
    perform app_hidden.raise_error(409, 'idempotency_key_reused',
      'This idempotency_key was used with other details (or different access); use a new key');
  elsif r.state = 'running' then
    -- Its owner unlocks only after its write committed or rolled back, and neither can have
    -- happened while this transaction holds the row: a free lock means the owner is gone.
    if pg_try_advisory_xact_lock(lock) or r.created_at <= at - run_limit then
      update app_private.idempotency_keys k set state = 'failed', updated_at = now()
       where k.credential_id = cred and k.operation_id = idempotency_begin.operation_id and k.key = idempotency_begin.key;
      settled := true;
      return;
    end if;
    perform app_hidden.raise_error(409, 'idempotency_in_progress',
      'The first call with this idempotency_key is still running; retry shortly');
  elsif r.state = 'failed' then
    perform app_hidden.raise_error(409, 'idempotency_outcome_unknown',
      'The first call with this idempotency_key failed after starting and may have taken effect; read the state before retrying with a new key');
  end if;
  response_status := r.response_status;
  response_body := r.response_body;
end $$;
comment on function app_hidden.idempotency_begin(text, text, text, timestamptz) is
  'Claims an idempotency key for the current credential (holding its advisory lock), or returns the stored answer, or records a gone first call as unknown, or raises the 409 that applies.';

-- Records the answer; called in the same transaction as the write. A claim a retry already
-- recorded as unknown (its first call ran past the time limit) stays unknown.
create or replace function app_hidden.idempotency_finish(operation_id text, key text, status int, body jsonb)
returns void language sql security definer
set search_path to pg_catalog, public, pg_temp as $$
  update app_private.idempotency_keys k
     set state = 'done', response_status = status, response_body = body, updated_at = now()
   where k.credential_id = app_hidden.current_credential_id()
     and k.operation_id = idempotency_finish.operation_id and k.key = idempotency_finish.key
     and k.state = 'running'
$$;

-- The owner recreated it, so PUBLIC would have EXECUTE again (see 000010).
revoke execute on function app_hidden.idempotency_begin(text, text, text, timestamptz) from public;
grant execute on function app_hidden.idempotency_begin(text, text, text, timestamptz) to svc_request;
