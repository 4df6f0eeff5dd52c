import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { ApiClient, Session } from './api-client.js';

export interface Organization {
  id: string;
  name: string;
}

export interface PageContext {
  api: ApiClient;
  session: Session;
  /** The org the pages show: the org admin's own, or the one a master session picked (undefined = all orgs). */
  orgId: string | undefined;
  orgs: Organization[];
}

export const PageContextValue = createContext<PageContext | undefined>(undefined);

export function usePage(): PageContext {
  const context = useContext(PageContextValue);
  if (!context) throw new Error('page rendered outside the dashboard shell');
  return context;
}
