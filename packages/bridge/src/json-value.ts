// The JSON value type of the contract: what crosses the boundary and what capsules store.

/** A JSON value as this package accepts it: plain objects and arrays, finite numbers. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | readonly JsonValue[]
  | { readonly [key: string]: JsonValue };
