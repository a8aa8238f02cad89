// The branded base error every @wf package extends: `code`, `cause`, optional `hint`, and a
// static `is` that recognises an error by a `Symbol.for` brand, so identity survives copies of a
// package and realm crossings where `instanceof` does not.

/** The registry key of the brand. `Symbol.for` keys are shared by every realm of one isolate. */
export const ERROR_BRAND: unique symbol = Symbol.for('@wf/errors.brand') as never;

/** The brand value of the base class; subclasses use their package name (`@wf/sandbox`). */
const BASE_BRAND = '@wf/errors';

/** A stable, redacted description of a failure: what crosses process, realm and guest borders. */
export interface ErrorInfo<C extends string = string> {
  readonly code: C;
  readonly message: string;
  /** One line telling the caller what to do next, when the code alone does not. */
  readonly hint?: string;
}

/** Any @wf error class: what `WfError.is` reads its brand from. */
export type BrandedErrorClass = (abstract new (
  ...args: never
) => WfError) & {
  readonly brand: string;
};

export interface WfErrorOptions {
  readonly cause?: unknown;
  readonly hint?: string;
}

/**
 * True when `value` carries the error brand `brand` (or any @wf brand when `brand` is omitted).
 * Reads one own-or-inherited symbol property; never calls getters on foreign objects beyond it.
 */
export function hasErrorBrand(value: unknown, brand?: string): boolean {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false;
  let tag: unknown;
  try {
    tag = (value as { [ERROR_BRAND]?: unknown })[ERROR_BRAND];
  } catch {
    return false;
  }
  if (typeof tag !== 'string') return false;
  return brand === undefined || brand === BASE_BRAND || tag === brand;
}

/**
 * The base of every @wf error class. A subclass sets `static readonly brand` to its package name
 * and narrows `code`; `is` then recognises exactly that subclass, from any copy or realm.
 */
export class WfError<C extends string = string> extends Error {
  /** The brand instances of this class carry; subclasses override it with their package name. */
  static readonly brand: string = BASE_BRAND;

  readonly code: C;
  declare readonly cause?: unknown;
  declare readonly hint?: string;
  declare readonly [ERROR_BRAND]: string;

  constructor(code: C, message: string, options: WfErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    if (options.hint !== undefined) this.hint = options.hint;
    const cls = new.target as unknown as { readonly brand: string; readonly name: string };
    this.name = cls.name;
    // Non-enumerable: JSON and structured clones carry `code`/`message`, not the brand.
    Object.defineProperty(this, ERROR_BRAND, { value: cls.brand });
  }

  /**
   * Realm-safe: on WfError, true for an error of any @wf package; on a subclass, true for that
   * subclass's brand only, and narrowed to it (the `this` type), so subclasses need no override.
   * Call it on the class (`SandboxError.is(x)`); a detached `is` has no class to read a brand from.
   */
  static is<T extends BrandedErrorClass>(this: T, value: unknown): value is InstanceType<T> {
    // biome-ignore lint/complexity/noThisInStatic: polymorphic on purpose, `this` is the class `is` was called on
    const brand: unknown = (this as T | undefined)?.brand;
    if (typeof brand !== 'string')
      throw new TypeError('WfError.is: call it on the error class (X.is(value)), not detached');
    return hasErrorBrand(value, brand);
  }

  /** The data form: `{ code, message, hint? }`, without cause or stack. */
  toInfo(): ErrorInfo<C> {
    return this.hint === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, hint: this.hint };
  }
}
