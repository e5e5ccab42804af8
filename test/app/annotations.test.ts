import cds from '@sap/cds'

/**
 * The Fiori annotations (app/<service>/annotations.cds) as a client sees them: each service's
 * $metadata, fetched from the running server, gives every entity set a header (UI.HeaderInfo),
 * list columns (UI.LineItem) whose properties exist and carry labels, and the main ones the fields
 * to filter by (UI.SelectionFields). Every path an annotation uses names a property, navigation or
 * annotation that exists, and every value list names an entity set of the same service. The table
 * below lists each service's entity sets: a new entity set fails the coverage check until it is
 * annotated and listed (CAP's own DraftAdministrativeData, which draft-enabled services carry, aside).
 */

process.env.CHAIN_B_CRAWLER_ENABLED = 'false'
process.env.CHAIN_A_FOLLOWER_ENABLED = 'false'
const { GET } = cds.test(__dirname + '/../..')
afterAll(() => {
  delete process.env.CHAIN_B_CRAWLER_ENABLED
  delete process.env.CHAIN_A_FOLLOWER_ENABLED
})

interface Annotated {
  /** The service's OData path. */
  path: string
  /** What a person lists and opens: header, columns, labels and fields to filter by. */
  main: string[]
  /** The rest (sub-lists of an object page, caches, settings): header, columns and labels. */
  parts: string[]
}

const SERVICES: Annotated[] = [
  {
    path: '/odata/v4/chaina-odata',
    main: ['Blocks', 'Epochs', 'Transactions', 'Addresses', 'AddressAssets', 'AssetHistory', 'Pools', 'Dreps', 'Accounts', 'AddressUTxOs', 'AddressTransactions'],
    parts: ['NetworkInformation', 'TransactionInputs', 'TransactionOutputs', 'TransactionInputAssets', 'TransactionOutputAssets', 'TransactionMetadata', 'UTxOAssets', 'LedgerProtocolParameters'],
  },
  {
    path: '/odata/v4/chaina-transaction',
    main: ['TransactionBuilds', 'TransactionSubmissions'],
    parts: ['BuildInputs', 'BuildOutputs', 'BuildAssets', 'BuildMetadata', 'ProtocolParametersCache', 'NetworkParametersCache'],
  },
  {
    path: '/odata/v4/chaina-sign',
    main: ['SigningRequests', 'SigningAuditLog', 'VerifiedTransactions', 'SigningPolicies'],
    parts: ['HsmConfigurations'],
  },
  {
    path: '/odata/v4/chainb',
    main: ['Documents', 'Attestations', 'AgentOutputAttestations', 'DisclosureGrants', 'Jobs', 'Blocks', 'Transactions', 'ContractActions', 'UnshieldedUtxos'],
    parts: ['TransactionSegments'],
  },
  { path: '/odata/v4/chainb-indexer', main: ['SyncState', 'ReorgLog'], parts: [] },
  { path: '/odata/v4/analytics', main: ['MetricBuckets', 'EpochSnapshots', 'Reorgs', 'SyncStatus'], parts: ['BucketWriterState'] },
  // The operator console's (app/console): its lists, object pages and value lists.
  {
    path: '/odata/v4/operator',
    main: ['Keys', 'LedgerEntries', 'Usage', 'Grants', 'Plans', 'Prices', 'Packs', 'Vouchers', 'AuditLog', 'WebhookSubscriptions', 'WebhookDeliveries'],
    parts: ['KeyStatuses', 'VoucherRedemptions'],
  },
  // Functions only: nothing to annotate (and a new entity set here would need annotations).
  { path: '/odata/v4/chainb-verify', main: [], parts: [] },
]

// ---------------------------------------------------------------------------------------------
// CSDL XML, read into a tree, and the annotation values into plain objects

interface XmlNode {
  tag: string
  attributes: Record<string, string>
  children: XmlNode[]
  text: string
}

const unescapeXml = (text: string) => text.replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')

function parseXml(xml: string): XmlNode {
  const root: XmlNode = { tag: '#document', attributes: {}, children: [], text: '' }
  const open = [root]
  for (const [, closing, tag, rest, selfClosing, text] of xml.matchAll(/<(\/?)([\w:.]+)([^>]*?)(\/?)>|([^<]+)/g)) {
    const parent = open[open.length - 1]
    if (text !== undefined) parent.text += unescapeXml(text.trim())
    else if (closing) open.pop()
    else {
      const attributes: Record<string, string> = {}
      for (const [, name, value] of rest.matchAll(/([\w:.]+)="([^"]*)"/g)) attributes[name] = unescapeXml(value)
      const node: XmlNode = { tag, attributes, children: [], text: '' }
      parent.children.push(node)
      if (!selfClosing) open.push(node)
    }
  }
  return root
}

function* descendants(node: XmlNode, tag: string): Generator<XmlNode> {
  for (const child of node.children) {
    if (child.tag === tag) yield child
    yield* descendants(child, tag)
  }
}

const PATH_KINDS = ['Path', 'PropertyPath', 'NavigationPropertyPath', 'AnnotationPath']

/** A path in an annotation value: what kind of path, and the path. */
interface PathValue { $kind: string; path: string }

/** An annotation's or property value's content as a plain value: records as objects (with $Type), collections as arrays, paths as PathValue. */
function valueOf(node: XmlNode): unknown {
  const { attributes } = node
  if ('String' in attributes) return attributes.String
  if ('Bool' in attributes) return attributes.Bool === 'true'
  if ('Int' in attributes) return Number(attributes.Int)
  if ('EnumMember' in attributes) return attributes.EnumMember
  for (const kind of PATH_KINDS) if (kind in attributes) return { $kind: kind, path: attributes[kind] }
  const content = node.children.filter(child => child.tag !== 'Annotation')
  if (content.length === 0) return node.tag === 'Annotation' ? true : node.text
  return elementValue(content[0])
}

function elementValue(node: XmlNode): unknown {
  switch (node.tag) {
    case 'Record': {
      const record: Record<string, unknown> = { $Type: node.attributes.Type }
      for (const property of node.children.filter(child => child.tag === 'PropertyValue')) record[property.attributes.Property] = valueOf(property)
      return record
    }
    case 'Collection': return node.children.map(elementValue)
    case 'String': return node.text
    case 'Bool': return node.text === 'true'
    case 'Int': return Number(node.text)
    default: return PATH_KINDS.includes(node.tag) ? { $kind: node.tag, path: node.text } : node.text
  }
}

/** Every PathValue in a value, with the name of the record property that holds it. */
function pathsIn(value: unknown, holder = ''): { holder: string; value: PathValue }[] {
  if (Array.isArray(value)) return value.flatMap(item => pathsIn(item, holder))
  if (value && typeof value === 'object') {
    if ('$kind' in value) return [{ holder, value: value as PathValue }]
    return Object.entries(value).flatMap(([key, item]) => pathsIn(item, key))
  }
  return []
}

// ---------------------------------------------------------------------------------------------
// A service's entity sets, types and annotations

interface EntityType {
  name: string
  properties: Set<string>
  /** Navigation property → qualified target type. */
  navigations: Map<string, string>
  /** Term (with #qualifier) → value, on the type itself. */
  annotations: Map<string, unknown>
  /** Property → term → value. */
  propertyAnnotations: Map<string, Map<string, unknown>>
}

interface Metadata {
  entitySets: Map<string, EntityType>
  types: Map<string, EntityType>
}

const termOf = (annotation: XmlNode) => annotation.attributes.Term + (annotation.attributes.Qualifier ? `#${annotation.attributes.Qualifier}` : '')

function readMetadata(xml: string): Metadata {
  const document = parseXml(xml)
  const types = new Map<string, EntityType>()
  for (const schema of descendants(document, 'Schema')) {
    for (const type of schema.children.filter(child => child.tag === 'EntityType')) {
      const entity: EntityType = { name: `${schema.attributes.Namespace}.${type.attributes.Name}`, properties: new Set(), navigations: new Map(), annotations: new Map(), propertyAnnotations: new Map() }
      for (const child of type.children) {
        if (child.tag === 'Property') entity.properties.add(child.attributes.Name)
        if (child.tag === 'NavigationProperty') entity.navigations.set(child.attributes.Name, child.attributes.Type.replace(/^Collection\((.*)\)$/, '$1'))
        if (child.tag === 'Property' || child.tag === 'NavigationProperty') {
          for (const annotation of child.children.filter(node => node.tag === 'Annotation')) annotate(entity, child.attributes.Name, annotation)
        }
      }
      for (const annotation of type.children.filter(node => node.tag === 'Annotation')) annotate(entity, undefined, annotation)
      types.set(entity.name, entity)
    }
  }
  for (const annotations of descendants(document, 'Annotations')) {
    const [typeName, member] = annotations.attributes.Target.split('/')
    const type = types.get(typeName)
    if (!type) continue
    for (const annotation of annotations.children.filter(node => node.tag === 'Annotation')) annotate(type, member, annotation)
  }
  const entitySets = new Map<string, EntityType>()
  for (const set of descendants(document, 'EntitySet')) entitySets.set(set.attributes.Name, types.get(set.attributes.EntityType)!)
  return { entitySets, types }
}

function annotate(type: EntityType, member: string | undefined, annotation: XmlNode) {
  if (member === undefined) return void type.annotations.set(termOf(annotation), valueOf(annotation))
  if (!type.propertyAnnotations.has(member)) type.propertyAnnotations.set(member, new Map())
  type.propertyAnnotations.get(member)!.set(termOf(annotation), valueOf(annotation))
}

/** Where a path of navigations and a last segment leads from a type: the type it ends on and whether the segment exists. */
function resolvePath(metadata: Metadata, type: EntityType, path: string): { type: EntityType; last: string; exists: boolean } {
  const segments = path.split('/')
  let current = type
  for (const segment of segments.slice(0, -1)) {
    const target = current.navigations.get(segment)
    if (!target || !metadata.types.has(target)) return { type: current, last: segment, exists: false }
    current = metadata.types.get(target)!
  }
  const last = segments[segments.length - 1]
  return { type: current, last, exists: current.properties.has(last) || current.navigations.has(last) }
}

/** Problems with one path of an annotation on `type`: a property or navigation that does not exist, an annotation path to nothing. */
function pathProblems(metadata: Metadata, type: EntityType, { $kind, path }: PathValue): string[] {
  if ($kind === 'AnnotationPath') {
    const [navigation, term] = path.split('@')
    const target = navigation ? resolvePath(metadata, type, navigation.replace(/\/$/, '')) : { type, last: '', exists: true }
    if (!target.exists) return [`${path}: no navigation ${navigation}`]
    const ending = navigation ? metadata.types.get(target.type.navigations.get(target.last) ?? '') : type
    return ending?.annotations.has(term) ? [] : [`${path}: no ${term} on ${ending?.name ?? navigation}`]
  }
  // An empty navigation path is the entity itself (CAP's draft side effects name it so).
  if ($kind === 'NavigationPropertyPath' && path === '') return []
  return resolvePath(metadata, type, path).exists ? [] : [`${path}: no such property`]
}

const metadataOf = new Map<string, Metadata>()

beforeAll(async () => {
  for (const { path } of SERVICES) {
    const { status, data } = await GET(`${path}/$metadata`, { auth: { username: 'alice', password: '' } })
    expect(status).toBe(200)
    metadataOf.set(path, readMetadata(data))
  }
})

const dataFields = (lineItem: unknown) => (Array.isArray(lineItem) ? lineItem : []).filter((field: any) => field?.$Type === 'UI.DataField')
const pathOf = (value: any): string | undefined => value?.$kind ? value.path : undefined

describe.each(SERVICES)('$path', service => {
  const metadata = () => metadataOf.get(service.path)!

  test('lists every entity set the service serves', () => {
    expect([...metadata().entitySets.keys()].filter(name => name !== 'DraftAdministrativeData').sort()).toEqual([...service.main, ...service.parts].sort())
  })

  const sets = [...service.main.map(name => ({ name, main: true })), ...service.parts.map(name => ({ name, main: false }))]
  if (sets.length === 0) return

  describe.each(sets)('$name', ({ name, main }) => {
    const type = () => metadata().entitySets.get(name)!

    test('has list columns (UI.LineItem) on existing, labelled properties', () => {
      const fields = dataFields(type().annotations.get('UI.LineItem'))
      expect(fields.length).toBeGreaterThanOrEqual(3)
      const problems: string[] = []
      for (const field of fields) {
        const property = pathOf(field.Value)
        const label = type().propertyAnnotations.get(property ?? '')?.get('Common.Label')
        if (!property || !type().properties.has(property)) problems.push(`${property}: no such property`)
        else if (typeof label !== 'string' || !label.trim()) problems.push(`${property}: no Common.Label`)
      }
      expect(problems).toEqual([])
    })

    test('has a header (UI.HeaderInfo) with type names and a title', () => {
      const header = type().annotations.get('UI.HeaderInfo') as any
      expect(header).toMatchObject({ TypeName: expect.stringMatching(/\S/), TypeNamePlural: expect.stringMatching(/\S/) })
      expect(type().properties).toContain(pathOf(header.Title?.Value))
    })

    if (main) {
      test('has fields to filter by (UI.SelectionFields)', () => {
        const fields = type().annotations.get('UI.SelectionFields')
        expect(Array.isArray(fields) && fields.length).toBeGreaterThan(0)
        for (const field of fields as unknown[]) expect(type().properties).toContain(pathOf(field))
      })
    }

    test('uses paths that exist, and value lists of entity sets of the service', () => {
      const problems: string[] = []
      for (const [term, value] of type().annotations) {
        problems.push(...pathsIn(value).flatMap(({ value: path }) => pathProblems(metadata(), type(), path)).map(problem => `${term}: ${problem}`))
      }
      for (const [property, terms] of type().propertyAnnotations) {
        for (const [term, value] of terms) {
          problems.push(...pathsIn(value).flatMap(({ value: path }) => pathProblems(metadata(), type(), path)).map(problem => `${property} ${term}: ${problem}`))
          if (term !== 'Common.ValueList') continue
          const list = value as any
          const collection = metadata().entitySets.get(list.CollectionPath)
          if (!collection) {
            problems.push(`${property} ${term}: no entity set ${list.CollectionPath}`)
            continue
          }
          const parameters = Array.isArray(list.Parameters) ? list.Parameters : []
          if (!parameters.some((parameter: any) => pathOf(parameter.LocalDataProperty) === property)) problems.push(`${property} ${term}: no parameter fills ${property}`)
          for (const parameter of parameters) {
            if (!collection.properties.has(parameter.ValueListProperty)) problems.push(`${property} ${term}: ${list.CollectionPath} has no ${parameter.ValueListProperty}`)
          }
        }
      }
      expect(problems).toEqual([])
    })
  })
})

test('the checks see a removed annotation: a type without its LineItem has no columns', () => {
  const xml = `<edmx:Edmx><edmx:DataServices><Schema Namespace="S"><EntityContainer Name="EntityContainer"><EntitySet Name="A" EntityType="S.A"/></EntityContainer>
    <EntityType Name="A"><Key><PropertyRef Name="id"/></Key><Property Name="id" Type="Edm.String"/><Property Name="b" Type="Edm.String"/></EntityType>
    <Annotations Target="S.A"><Annotation Term="UI.LineItem"><Collection><Record Type="UI.DataField"><PropertyValue Property="Value" Path="id"/></Record>
    <Record Type="UI.DataField"><PropertyValue Property="Value" Path="b"/></Record></Collection></Annotation>
    <Annotation Term="UI.SelectionFields"><Collection><PropertyPath>b</PropertyPath></Collection></Annotation></Annotations>
    <Annotations Target="S.A/b"><Annotation Term="Common.Label" String="B &amp; more"/></Annotations></Schema></edmx:DataServices></edmx:Edmx>`
  const type = readMetadata(xml).entitySets.get('A')!
  expect(dataFields(type.annotations.get('UI.LineItem')).map(field => pathOf(field.Value))).toEqual(['id', 'b'])
  expect(type.annotations.get('UI.SelectionFields')).toEqual([{ $kind: 'PropertyPath', path: 'b' }])
  expect(type.propertyAnnotations.get('b')?.get('Common.Label')).toBe('B & more')
  expect(type.propertyAnnotations.get('id')?.get('Common.Label')).toBeUndefined()
  expect(type.annotations.has('UI.HeaderInfo')).toBe(false)
})
