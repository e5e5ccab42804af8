import {
  GraphQLInputObjectType, GraphQLInt, GraphQLInterfaceType, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLScalarType,
  GraphQLSchema, GraphQLUnionType, isInputObjectType, isInterfaceType, isIntrospectionType, isListType, isNonNullType, isObjectType,
  isSpecifiedScalarType, isUnionType, type GraphQLNamedType, type GraphQLType,
} from 'graphql'

/**
 * The indexer's `Int` as its server writes it: the public indexer's integers are 64-bit (a block's
 * `timestamp` is the node's Unix milliseconds), written as JSON numbers, where GraphQL's reference
 * `Int` refuses any beyond 32 bits. Here an `Int` answers every integer a JSON number holds exactly;
 * what it accepts as input is unchanged.
 */
const IndexerInt = new GraphQLScalarType({
  ...GraphQLInt.toConfig(),
  coerceOutputValue: (value: unknown) => (typeof value === 'number' && Number.isSafeInteger(value) ? value : GraphQLInt.coerceOutputValue(value)),
})

/** The same schema with the indexer's `Int` in place of GraphQL's wherever a type refers to it. */
export function withIndexerInt(schema: GraphQLSchema): GraphQLSchema {
  const mapped = new Map<string, GraphQLNamedType>([['Int', IndexerInt]])
  const named = (type: GraphQLNamedType): GraphQLNamedType => mapped.get(type.name) ?? type
  const wrapped = <T extends GraphQLType>(type: T): T => {
    if (isListType(type)) return new GraphQLList(wrapped(type.ofType)) as unknown as T
    if (isNonNullType(type)) return new GraphQLNonNull(wrapped(type.ofType)) as unknown as T
    return named(type as GraphQLNamedType) as T
  }
  const withArgs = <F extends { type: GraphQLType; args?: Record<string, { type: GraphQLType }> }>(fields: Record<string, F>) =>
    Object.fromEntries(Object.entries(fields).map(([name, field]) => [name, {
      ...field, type: wrapped(field.type),
      ...(field.args && { args: Object.fromEntries(Object.entries(field.args).map(([arg, config]) => [arg, { ...config, type: wrapped(config.type) }])) }),
    }])) as Record<string, F>
  const interfaces = (list: readonly GraphQLInterfaceType[]) => list.map(type => named(type) as GraphQLInterfaceType)

  for (const type of Object.values(schema.getTypeMap())) {
    if (isIntrospectionType(type) || isSpecifiedScalarType(type)) continue
    if (isObjectType(type)) {
      const config = type.toConfig()
      mapped.set(type.name, new GraphQLObjectType({ ...config, interfaces: () => interfaces(config.interfaces), fields: () => withArgs(config.fields) }))
    } else if (isInterfaceType(type)) {
      const config = type.toConfig()
      mapped.set(type.name, new GraphQLInterfaceType({ ...config, interfaces: () => interfaces(config.interfaces), fields: () => withArgs(config.fields) }))
    } else if (isUnionType(type)) {
      const config = type.toConfig()
      mapped.set(type.name, new GraphQLUnionType({ ...config, types: () => config.types.map(member => named(member) as GraphQLObjectType) }))
    } else if (isInputObjectType(type)) {
      const config = type.toConfig()
      mapped.set(type.name, new GraphQLInputObjectType({ ...config, fields: () => withArgs(config.fields) }))
    } else mapped.set(type.name, type)
  }
  const config = schema.toConfig()
  const root = (type: GraphQLObjectType | null | undefined) => (type ? (named(type) as GraphQLObjectType) : undefined)
  return new GraphQLSchema({
    ...config,
    query: root(config.query), mutation: root(config.mutation), subscription: root(config.subscription),
    types: [...mapped.values()],
  })
}
