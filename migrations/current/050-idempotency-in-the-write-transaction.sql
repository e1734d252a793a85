-- Idempotency: the key is claimed inside the write's own transaction.
--
-- Until now a call claimed its key in a short transaction of its own (idempotency_begin), ran
-- its write in a second one, and held a session-level advisory lock between the two so that a
-- retry could tell a live first call from a dead one. Every idempotent write paid two commits
-- (two WAL flushes), and a process that died between them left the key `running`, to be
-- settled as idempotency_outcome_unknown.
--
-- Every idempotent operation acts only inside the database: what it causes outside (a message,
-- a webhook) is a job enqueued in the same transaction. So the claim, the write and the stored
-- answer can commit together, or not at all:
--   * the claim takes a transaction-level advisory lock on the key. A concurrent call with the
--     same key cannot take it while the first call's transaction is open, and answers
--     idempotency_in_progress at once; after the first call commits (the lock is released
--     after the commit is visible), a retry finds the stored answer;
--   * a write that is refused or fails rolls back with its claim: the key stays free;
--   * a process killed mid-write, or a commit whose answer was lost, leaves either nothing (the
--     retry runs the call) or the committed answer (the retry gets it). Neither can be
--     mistaken, so no call is recorded as unknown any more.
-- Records left `running` or `failed` by the earlier protocol answer
-- idempotency_outcome_unknown until they expire (24 h).
--
-- Lock keys are app_private.idempotency_lock_key's, as before (same key space, see 000012
-- part 400).

set local role svc_owner;

-- The fingerprint: a hash of the request's details (computed by the caller, key left out)
-- and of the caller's access, read here from the settings authenticate made for this
-- transaction. A replay after the caller's access changed is idempotency_key_reused.
create or replace function app_hidden.idempotency_fingerprint(details text)
returns text language sql stable parallel safe
set search_path to pg_catalog, public, pg_temp as $$
  select encode(sha256(convert_to(details
    || '|' || current_setting('svc.role') || '|' || current_setting('svc.location_ids')
    || '|' || current_setting('svc.powers') || '|' || current_setting('svc.scopes'), 'UTF8')), 'hex')
$$;
comment on function app_hidden.idempotency_fingerprint(text) is
  'Fingerprint of an idempotent call: the details'' hash and the current credential''s access.';

-- In the write's transaction, before the write. Returns the stored answer of a first call
-- (response_status set), or nothing stored (the caller writes, then calls
-- idempotency_record in the same transaction); raises the 409 that applies otherwise.
-- `at` is the caller's clock, so tests can move it.
create or replace function app_hidden.idempotency_claim(operation_id text, key text, details text, at timestamptz,
  out response_status int, out response_body jsonb)
language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
declare
  r app_private.idempotency_keys;
  cred uuid := app_hidden.current_credential_id();
begin
  if cred is null then
    perform app_hidden.raise_error(401, 'unauthorized', 'Invalid API key');
  end if;
  -- held to the end of this transaction, so until its answer is committed and visible
  if not pg_try_advisory_xact_lock(app_private.idempotency_lock_key(cred, idempotency_claim.operation_id, idempotency_claim.key)) then
    perform app_hidden.raise_error(409, 'idempotency_in_progress',
      'The first call with this idempotency_key is still running; retry shortly');
  end if;
  select * into r from app_private.idempotency_keys k
   where k.credential_id = cred and k.operation_id = idempotency_claim.operation_id and k.key = idempotency_claim.key
     and k.created_at > at - interval '24 hours';
  if not found then
    return;
  end if;
  if r.fingerprint <> app_hidden.idempotency_fingerprint(details) then
    perform app_hidden.raise_error(409, 'idempotency_key_reused',
      'This idempotency_key was used with other details (or different access); use a new key');
  elsif r.state <> 'done' then
    -- 'failed', or 'running' while this transaction holds the key's lock: a first call of the
    -- earlier protocol that died after starting
    perform app_hidden.raise_error(409, 'idempotency_outcome_unknown',
      'The first call with this idempotency_key failed after starting and may have taken effect; read the state before retrying with a new key');
  end if;
  response_status := r.response_status;
  response_body := r.response_body;
end $$;
comment on function app_hidden.idempotency_claim(text, text, text, timestamptz) is
  'Claims an idempotency key for the current transaction (advisory xact lock), or returns the stored answer, or raises the 409 that applies.';

-- After the write, in its transaction: the answer commits with it. An expired record of the
-- same key is replaced. PL/pgSQL so that its insert's plan is kept by the connection (a SQL
-- function that cannot be inlined is planned at every call).
drop function if exists app_hidden.idempotency_record(text, text, text, timestamptz, int, jsonb);
create function app_hidden.idempotency_record(operation_id text, key text, details text, at timestamptz,
  status int, body jsonb)
returns void language plpgsql security definer
set search_path to pg_catalog, public, pg_temp as $$
begin
  insert into app_private.idempotency_keys as k
    (credential_id, operation_id, key, organization_id, fingerprint, state, response_status, response_body, created_at)
  values (app_hidden.current_credential_id(), idempotency_record.operation_id, idempotency_record.key,
          app_hidden.current_org_id(), app_hidden.idempotency_fingerprint(details), 'done', status, body, at)
  on conflict on constraint idempotency_keys_pkey do update
     set fingerprint = excluded.fingerprint, state = 'done', response_status = excluded.response_status,
         response_body = excluded.response_body, created_at = excluded.created_at, updated_at = now();
end $$;
comment on function app_hidden.idempotency_record(text, text, text, timestamptz, int, jsonb) is
  'Stores the answer of an idempotent call in the transaction of its write.';

-- The two-transaction protocol's functions go.
drop function if exists app_hidden.idempotency_begin(text, text, text, timestamptz);
drop function if exists app_hidden.idempotency_finish(text, text, int, jsonb);
drop function if exists app_hidden.idempotency_release(text, text, boolean);

revoke execute on function app_hidden.idempotency_fingerprint(text),
  app_hidden.idempotency_claim(text, text, text, timestamptz),
  app_hidden.idempotency_record(text, text, text, timestamptz, int, jsonb) from public;
grant execute on function app_hidden.idempotency_claim(text, text, text, timestamptz),
  app_hidden.idempotency_record(text, text, text, timestamptz, int, jsonb) to svc_request;

reset role;
