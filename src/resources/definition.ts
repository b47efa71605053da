/**
 * A resource: its root element name and its fields in wire order with their types. JSON, XML type
 * attributes and the renderers' output all derive from this one description.
 */
/** `json`: a JSON object held as its text; JSON writes the object, XML the text (docs/api.md#formats). */
export type ScalarType = 'integer' | 'string' | 'datetime' | 'boolean' | 'json';

export type FieldType = ScalarType | { arrayOf: ResourceDefinition };

export interface ResourceDefinition {
  /** Element name of one record, and the JSON wrapper key. */
  readonly root: string;
  /** Element name of a list. */
  readonly plural: string;
  readonly fields: ReadonlyArray<readonly [name: string, type: FieldType]>;
  /** Fields that are written only when the record has them (e.g. a new API key). */
  readonly optional?: ReadonlySet<string>;
  /** Fields that may be null (`null` in JSON, `nil="true"` in XML); the others never are. */
  readonly nullable?: ReadonlySet<string>;
  /** The only values a string field takes. */
  readonly values?: Readonly<Record<string, readonly string[]>>;
  /** JSON without the root wrapper (the version resource is `{"version": "1.2"}`). */
  readonly unwrappedJson?: boolean;
}

/** A record whose keys are the resource's field names (an interface such as User qualifies). */
export type ResourceRecord = object;
