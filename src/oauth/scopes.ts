// The scopes a person may grant an OAuth client now: those of the catalog for which their role
// can call at least one operation (as app_hidden.requirement_refusal would decide), without
// conversations:write while they may not text: a member whose SMS setting is off (spec:
// Authentication 5, 7).
import { ALL_SCOPES, type Scope } from '../auth/scopes.ts';
import type { AnyOperation } from '../registry/operation.ts';

export interface Person {
  organization_id: string;
  person_id: string;
  organization_name: string;
  role: 'owner' | 'admin' | 'manager' | 'member';
  powers: string[];
  sms_enabled: boolean;
}

export function grantableScopes(p: Person, ops: readonly AnyOperation[]): Scope[] {
  const callable = (scope: Scope) => ops.some((op) => {
    if (op.scope !== scope) return false;
    if (p.role === 'owner' || p.role === 'admin') return true;
    if (p.role === 'manager') return op.managerPower ? p.powers.includes(op.managerPower) : op.memberAccess !== 'deny';
    return op.memberAccess !== 'deny' && (op.memberAccess !== 'sms_setting' || p.sms_enabled);
  });
  // the SMS setting limits members only (spec: Authentication 5, 7), as the API's own check does:
  // an owner, admin or manager texts whatever their setting says
  const mayNotText = p.role === 'member' && !p.sms_enabled;
  return ALL_SCOPES.filter((s) => callable(s) && !(s === 'conversations:write' && mayNotText));
}
