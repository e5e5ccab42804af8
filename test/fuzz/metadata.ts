/**
 * What a running server serves, discovered from the server itself: the OData services it logs as
 * served ("serving X { at: [ … ] }"), and from each service's $metadata document its entity sets
 * (properties, keys, navigation properties) and unbound actions and functions (parameters).
 */

export interface EdmProperty {
  name: string
  /** The Edm type without `Collection(…)`, e.g. `Edm.String`, `Edm.Guid`, or a type of the service. */
  type: string
  collection: boolean
  /** False for a mandatory parameter (`Nullable="false"`). */
  nullable: boolean
  maxLength?: number
}

export interface Navigation {
  name: string
  collection: boolean
  targetType: string
}

export interface EntitySet {
  service: Service
  name: string
  typeName: string
  properties: EdmProperty[]
  keys: EdmProperty[]
  navigations: Navigation[]
}

export interface Operation {
  service: Service
  name: string
  kind: 'action' | 'function'
  parameters: EdmProperty[]
}

export interface Service {
  name: string
  path: string
  entitySets: EntitySet[]
  operations: Operation[]
}

/** The OData services a CAP server logged as served, each at its first OData path. */
export function servedServices(log: string): { name: string; path: string }[] {
  const served: { name: string; path: string }[] = []
  for (const match of log.matchAll(/serving (\S+) \{\s*at: \[([^\]]*)\]/g)) {
    const paths = [...match[2].matchAll(/'([^']+)'/g)].map(path => path[1])
    const odata = paths.find(path => path.startsWith('/odata/'))
    if (odata) served.push({ name: match[1], path: odata })
  }
  return served
}

interface Element {
  attributes: Record<string, string>
  inner: string
}

/** Elements `<tag …>…</tag>` or `<tag …/>` (not nested in themselves, as in CSDL). */
function elements(xml: string, tag: string): Element[] {
  const found: Element[] = []
  const pattern = new RegExp(`<${tag}\\b([^>]*?)(/>|>([\\s\\S]*?)</${tag}>)`, 'g')
  for (const match of xml.matchAll(pattern)) found.push({ attributes: attributesOf(match[1]), inner: match[3] ?? '' })
  return found
}

function attributesOf(text: string): Record<string, string> {
  const attributes: Record<string, string> = {}
  for (const match of text.matchAll(/([\w:.]+)="([^"]*)"/g)) attributes[match[1]] = unescapeXml(match[2])
  return attributes
}

const unescapeXml = (text: string) => text.replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')

function typed(attributes: Record<string, string>): EdmProperty {
  const type = attributes.Type ?? 'Edm.String'
  const collection = /^Collection\((.*)\)$/.exec(type)
  const maxLength = Number(attributes.MaxLength)
  return { name: attributes.Name, type: collection ? collection[1] : type, collection: !!collection, nullable: attributes.Nullable !== 'false', ...(maxLength > 0 ? { maxLength } : {}) }
}

const localName = (qualified: string) => qualified.slice(qualified.lastIndexOf('.') + 1)

/** Parses a service's $metadata (CSDL XML, as CAP renders it) into entity sets and unbound operations. */
export function parseMetadata(name: string, path: string, xml: string): Service {
  const service: Service = { name, path, entitySets: [], operations: [] }
  const types = new Map(elements(xml, 'EntityType').map(type => [type.attributes.Name, type]))
  for (const set of elements(xml, 'EntitySet')) {
    const typeName = localName(set.attributes.EntityType ?? '')
    const type = types.get(typeName)
    if (!type) continue
    const properties = elements(type.inner, 'Property').map(property => typed(property.attributes))
    const keyNames = elements(type.inner, 'PropertyRef').map(ref => ref.attributes.Name)
    const navigations = elements(type.inner, 'NavigationProperty').map(nav => {
      const { type: targetType, collection } = typed(nav.attributes)
      return { name: nav.attributes.Name, collection, targetType: localName(targetType) }
    })
    service.entitySets.push({ service, name: set.attributes.Name, typeName, properties, keys: properties.filter(p => keyNames.includes(p.name)), navigations })
  }
  for (const kind of ['action', 'function'] as const) {
    const tag = kind === 'action' ? 'Action' : 'Function'
    const declared = new Map(elements(xml, tag).filter(op => op.attributes.IsBound !== 'true').map(op => [op.attributes.Name, op]))
    for (const imported of elements(xml, `${tag}Import`)) {
      const declaration = declared.get(localName(imported.attributes[tag] ?? ''))
      if (!declaration) continue
      const parameters = elements(declaration.inner, 'Parameter').map(parameter => typed(parameter.attributes))
      service.operations.push({ service, name: imported.attributes.Name, kind, parameters })
    }
  }
  return service
}

/** The entity set whose entity type has this local name (a navigation's target). */
export function setOfType(service: Service, typeName: string): EntitySet | undefined {
  return service.entitySets.find(set => set.typeName === typeName)
}
