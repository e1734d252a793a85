// The audiences area: static and dynamic segments of contacts, counted, previewed and listed.
import type { Area } from '../registry/area.ts';
import { audiencesAddMember, audiencesCount, audiencesListMembers, audiencesPreviewCount, audiencesRemoveMember } from './members.ts';
import { audiencesArchive, audiencesCreate, audiencesGet, audiencesList, audiencesUpdate } from './records.ts';

export const audiences: Area = {
  name: 'audiences',
  // the fixed path /audiences/preview-count comes before the /audiences/{audienceId} paths
  operations: [
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
  ],
  graphql: {
    // what audiences_get and audiences_list_members show (not who created an audience, nor when a member was added)
    tables: {
      audiences: ['organization_id', 'id', 'name', 'description', 'kind', 'channel', 'definition', 'exclude_opted_out',
        'archived_at', 'created_at', 'updated_at'],
      audience_members: ['organization_id', 'audience_id', 'contact_id'],
    },
    groupBy: ['audience_id'],
  },
};
