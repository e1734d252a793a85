// The areas of the product, in the order their operations are routed and their fixture parts
// are applied (an area after those it builds on). Adding an area is one line here: see the
// README's "Adding an area".
import type { Area } from './registry/area.ts';
import { appointments } from './appointments/index.ts';
import { audiences } from './audiences/index.ts';
import { broadcasts } from './broadcasts/index.ts';
import { calls } from './calls/index.ts';
import { contacts } from './contacts/index.ts';
import { dashboard } from './dashboard/index.ts';
import { conversations } from './conversations/index.ts';
import { delivery } from './delivery/area.ts';
import { forms } from './forms/index.ts';
import { me } from './me/index.ts';
import { oauth } from './oauth/index.ts';
import { receptionist } from './receptionist/index.ts';
import { sequences } from './sequences/index.ts';
import { webhooks } from './webhooks/index.ts';

export const AREAS: readonly Area[] = [me, contacts, audiences, sequences, broadcasts, appointments, calls, forms, conversations, receptionist, delivery, dashboard, oauth, webhooks];
