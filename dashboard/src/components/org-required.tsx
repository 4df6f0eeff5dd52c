import type { ComponentChildren } from 'preact';
import { usePage } from '../page-context.js';

/** Pages about one org's data ask a master session to pick an org first. */
export function OrgRequired({ children }: { children: ComponentChildren }) {
  const { orgId } = usePage();
  if (!orgId) return <p class="status">Choose an organization above to see this page.</p>;
  return <>{children}</>;
}
