// The allowlist (exposed.ts) applied to PostGraphile's schema through its behavior system:
// every table, column, function, unique lookup and relation it does not list gets the
// behavior `-*`, which turns off everything PostGraphile (and @graphile/pg-aggregates) would
// make of it: types, root fields, node lookups, relation fields, conditions, orderings,
// aggregates and groupings. `-*` is applied as an override, after the inferred and smart-tag
// behaviors, so nothing in the database (a comment's @behavior) can turn a hidden entity back on.
import type { PgCodec, PgCodecRelation, PgResource } from 'postgraphile/@dataplan/pg';
import type { GraphqlExposure } from './exposed.ts';

const HIDDEN: GraphileBuild.BehaviorString = '-*';

export function exposurePlugin(exposed: GraphqlExposure): GraphileConfig.Plugin {
  const isTable = (codec: PgCodec) => Boolean(codec.attributes && codec.extensions?.isTableLike);
  /** The columns shown of a table's row type; undefined for a table that is not exposed, and for anything else. */
  const columnsOf = (codec: PgCodec): readonly string[] | undefined => {
    const pg = codec.extensions?.pg;
    if (!isTable(codec) || pg?.schemaName !== 'app_public') return undefined;
    return Object.hasOwn(exposed, pg.name) ? exposed[pg.name] : undefined;
  };
  const attributeShown = (codec: PgCodec, name: string) => columnsOf(codec)?.includes(name) ?? false;
  // Functions (they have parameters) are never shown: operations belong to REST and MCP, whose
  // registry checks scope, member access and power for each.
  const resourceShown = (resource: PgResource) => !resource.parameters && columnsOf(resource.codec) !== undefined;
  const relationShown = (relation: PgCodecRelation) =>
    columnsOf(relation.localCodec) !== undefined && resourceShown(relation.remoteResource)
    && relation.localAttributes.every((a) => attributeShown(relation.localCodec, a))
    && relation.remoteAttributes.every((a) => attributeShown(relation.remoteResource.codec, a));
  const unless = (shown: boolean) => (behavior: GraphileBuild.BehaviorString) => (shown ? [behavior] : [behavior, HIDDEN]);

  return {
    name: 'SvcExposurePlugin',
    version: '1.0.0',
    schema: {
      entityBehavior: {
        // Types that are no table's (scalars, enums, the composite types of functions) stay:
        // they appear only where a shown column or a function uses them.
        pgCodec: {
          override: (behavior, codec) => unless(!isTable(codec) || columnsOf(codec) !== undefined)(behavior),
        },
        pgCodecAttribute: {
          override: (behavior, [codec, name]) => unless(!isTable(codec) || attributeShown(codec, name))(behavior),
        },
        pgResource: {
          override: (behavior, resource) => unless(resourceShown(resource))(behavior),
        },
        pgResourceUnique: {
          override: (behavior, [resource, unique]) =>
            unless(resourceShown(resource) && unique.attributes.every((a) => attributeShown(resource.codec, a)))(behavior),
        },
        pgCodecRelation: {
          override: (behavior, relation) => unless(relationShown(relation))(behavior),
        },
      },
    },
  };
}
