// The audiences area's operations, in routing order: the fixed path /audiences/preview-count
// comes before the /audiences/{audienceId} paths.
import { audiencesAddMember, audiencesCount, audiencesListMembers, audiencesPreviewCount, audiencesRemoveMember } from './members.ts';
import { audiencesArchive, audiencesCreate, audiencesGet, audiencesList, audiencesUpdate } from './records.ts';

export const audiencesOperations = [
  audiencesPreviewCount,
  audiencesList,
  audiencesCreate,
  audiencesGet,
  audiencesUpdate,
  audiencesArchive,
  audiencesCount,
  audiencesListMembers,
  audiencesAddMember,
  audiencesRemoveMember,
] as const;
