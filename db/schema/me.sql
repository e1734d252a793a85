-- db/schema/me.sql: what src/me/ stands on.
-- The part of db/schema.sql whose objects this area owns (scripts/schema-areas.ts says which);
-- written with it by `npm run db:dump`. Do not edit; db/README.md says how to read it.

-- The me area owns no tables or functions of its own: it reads through the platform's.
