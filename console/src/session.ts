import { computed, signal } from '@preact/signals';

/**
 * Who is signed in. The key or token lives in this tab's sessionStorage only: never in a URL,
 * a cookie or a log, gone when the tab closes or on sign-out.
 */
export type Role = 'owner' | 'operator';

export interface Session {
  role: Role;
  secret: string;
  /** What the header bar shows: the account name (owner) or "Operator". */
  label: string;
}

const storageKey = 'signage-console-session';

function load(): Session | null {
  try {
    const raw = sessionStorage.getItem(storageKey);
    if (!raw) return null;
    const value = JSON.parse(raw) as Partial<Session>;
    return (value.role === 'owner' || value.role === 'operator') && typeof value.secret === 'string'
      ? { role: value.role, secret: value.secret, label: String(value.label ?? '') }
      : null;
  } catch {
    return null;
  }
}

export const session = signal<Session | null>(load());
export const role = computed(() => session.value?.role ?? null);

export function signIn(value: Session): void {
  sessionStorage.setItem(storageKey, JSON.stringify(value));
  signOutReason.value = null;
  session.value = value;
}

/** Why the last session ended, when it was not the user's choice (shown on the sign-in form). */
export const signOutReason = signal<string | null>(null);

export function signOut(reason: string | null = null): void {
  sessionStorage.removeItem(storageKey);
  session.value = null;
  signOutReason.value = reason;
}
