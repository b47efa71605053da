/**
 * A resource: its root element name and its fields in wire order with their types. JSON, XML type
 * attributes, the renderers' output and the client's record types (src/client/records.ts) all derive
 * from this one description.
 */
/** `json`: a JSON object held as its text; JSON writes the object, XML the text (docs/api.md#formats). */
/** `decimal`: a number that may have a fraction (a price); XML writes `type="decimal"`. */
export type ScalarType = 'integer' | 'decimal' | 'string' | 'datetime' | 'boolean' | 'json';

export type FieldType = ScalarType | { readonly arrayOf: ResourceDefinition };

/** A field: its name, its type, and `'nullable'` when the record may hold null there (written `nil="true"`). */
export type FieldDefinition = readonly [name: string, type: FieldType, nullable?: 'nullable'];

export interface ResourceDefinition {
  /** Element name of one record, and the JSON wrapper key. */
  readonly root: string;
  /** Element name of a list. */
  readonly plural: string;
  readonly fields: ReadonlyArray<FieldDefinition>;
  /** Fields that are written only when the record has them (e.g. a new API key). */
  readonly optional?: ReadonlyArray<string>;
  /** The only values a string field takes. */
  readonly values?: Readonly<Record<string, readonly string[]>>;
  /** The OpenAPI schema's name, when two resources share a root (a user's roles and /roles); else made from the root. */
  readonly schema?: string;
  /** JSON without the root wrapper (the version resource is `{"version": "1.2"}`). */
  readonly unwrappedJson?: boolean;
}

/** A record whose keys are the resource's field names (an interface such as User qualifies). */
export type ResourceRecord = object;
