--! Previous: sha1:a3b16f7d771ed4d569fddf0e85a4d72167629832
--! Hash: sha1:529016d777774cb2916907e143938a46bfe30588
--! Message: row-level security on the new tables

--! split: 100-row-level-security.sql
-- Every table of ours has row-level security on, with no policy where no request role may read it:
-- the tables the receptionist, voice, delivery retries, worker liveness and the in-flight bound
-- added are read and written only by the owner's functions, and stay closed to every other role.
set local role svc_owner;

alter table app_private.receptionist_states enable row level security;
alter table app_private.receptionist_handovers enable row level security;
alter table app_private.voice_secrets enable row level security;
alter table app_private.voice_calls enable row level security;
alter table app_private.broadcast_handed enable row level security;
alter table app_private.delivery_retry_settings enable row level security;
alter table app_private.worker_processes enable row level security;
alter table app_private.inbound_claims enable row level security;
alter table app_private.voice_turns enable row level security;

reset role;
