// Writing sequences: create, read, update, activate, pause, resume, duplicate, and the discovery
// operations an agent authors from.
import type { FixtureSection } from '../admin/fixture.ts';
import type { AnyOperation } from '../registry/operation.ts';

export const authoringOperations: AnyOperation[] = [];
export const sequencesFixture: FixtureSection | undefined = undefined;
