import type { Request } from 'express';
import { validationError, type ErrorDetail } from '../errors.js';

type Query = Request['query'];

/**
 * Reads query parameters, collecting every problem so one 400 names them all (CONTRACT 3).
 * Unknown parameters are ignored. Call `done()` after the last read.
 */
export class QueryReader {
  private readonly problems: ErrorDetail[] = [];

  constructor(private readonly query: Query) {}

  private fail(path: string, message: string): undefined {
    this.problems.push({ path, message });
    return undefined;
  }

  /** One string value; a repeated parameter is an error. */
  string(name: string): string | undefined {
    const value = this.query[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string') return this.fail(name, `${name} must be given once`);
    return value;
  }

  int(name: string, min: number, max: number, fallback: number): number;
  int(name: string, min: number, max: number): number | undefined;
  int(name: string, min: number, max: number, fallback?: number): number | undefined {
    const text = this.string(name);
    if (text === undefined) return fallback;
    const n = /^\s*\d+\s*$/.test(text) ? Number(text) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      const range = max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`;
      this.fail(name, `${name} must be an integer ${range}`);
      return fallback;
    }
    return n;
  }

  bool(name: string): boolean | undefined {
    const text = this.string(name);
    if (text === undefined) return undefined;
    if (text === 'true') return true;
    if (text === 'false') return false;
    return this.fail(name, `${name} must be true or false`);
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const text = this.string(name);
    if (text === undefined) return fallback;
    if ((allowed as readonly string[]).includes(text)) return text as T;
    this.fail(name, `${name} must be one of ${allowed.join(', ')}`);
    return fallback;
  }

  /**
   * Comma-separated values, trimmed, possibly repeated (`?tags=a&tags=b,c`). Present but
   * empty is an error rather than "no filter", so an empty variable in a client cannot widen
   * a query to everything.
   */
  list(name: string, max = 1000): string[] | undefined {
    const raw = this.query[name];
    if (raw === undefined) return undefined;
    const parts = (Array.isArray(raw) ? raw : [raw]).flatMap((v) => (typeof v === 'string' ? v.split(',') : []));
    const values = [...new Set(parts.map((v) => v.trim()).filter((v) => v !== ''))];
    if (values.length === 0 || values.length > max) {
      return this.fail(name, `${name} must list 1 to ${max} comma-separated values`);
    }
    return values;
  }

  /** Throws the collected 400, if any. */
  done(): void {
    if (this.problems.length > 0) throw validationError(this.problems);
  }
}
