import type { FunctionComponent } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { createApiClient, fetchSession, signOut, type Session } from './api-client.js';
import { Loading } from './components/status-view.js';
import { PageContextValue, type Organization } from './page-context.js';
import { ChannelsPage } from './pages/channels-page.js';
import { CreditsPage } from './pages/credits-page.js';
import { ExperimentsPage } from './pages/experiments-page.js';
import { GuardrailsPage } from './pages/guardrails-page.js';
import { KeysPage } from './pages/keys-page.js';
import { ModelsPage } from './pages/models-page.js';
import { PromptsPage } from './pages/prompts-page.js';
import { ProvidersPage } from './pages/providers-page.js';
import { RequestLogPage } from './pages/request-log-page.js';
import { SignInPage } from './pages/sign-in-page.js';
import { UsagePage } from './pages/usage-page.js';

const BASE = '/dashboard/';

export const PAGES: { slug: string; title: string; component: FunctionComponent }[] = [
  { slug: 'keys', title: 'Keys', component: KeysPage },
  { slug: 'usage', title: 'Usage and spend', component: UsagePage },
  { slug: 'credits', title: 'Credits', component: CreditsPage },
  { slug: 'requests', title: 'Request log', component: RequestLogPage },
  { slug: 'models', title: 'Models and pricing', component: ModelsPage },
  { slug: 'guardrails', title: 'Guardrails', component: GuardrailsPage },
  { slug: 'prompts', title: 'Prompts', component: PromptsPage },
  { slug: 'experiments', title: 'Experiments', component: ExperimentsPage },
  { slug: 'channels', title: 'Channels', component: ChannelsPage },
  { slug: 'providers', title: 'Providers', component: ProvidersPage },
];

function slugFromLocation(): string {
  const slug = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length).split('/')[0] : '';
  return PAGES.some((page) => page.slug === slug) ? slug : 'keys';
}

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [slug, setSlug] = useState(slugFromLocation);
  const [orgs, setOrgs] = useState<Organization[]>([]);
  const [chosenOrg, setChosenOrg] = useState<string>('');
  const [menuOpen, setMenuOpen] = useState(false);
  const mainRef = useRef<HTMLElement>(null);

  useEffect(() => {
    fetchSession().then((found) => setSession(found ?? null), () => setSession(null));
    const onPop = () => setSlug(slugFromLocation());
    addEventListener('popstate', onPop);
    return () => removeEventListener('popstate', onPop);
  }, []);

  const orgId = session?.scope === 'org' ? (session.orgId ?? undefined) : chosenOrg || undefined;
  const api = useMemo(() => (session ? createApiClient(session, orgId, () => setSession(null)) : undefined), [session, orgId]);

  useEffect(() => {
    if (!api) return;
    api.get<{ data: Organization[] }>('/api/admin/orgs').then(
      ({ data }) => {
        setOrgs(data);
        // A master session starts on the first org, so org-scoped pages have something to show.
        if (session?.scope === 'master' && !chosenOrg && data[0]) setChosenOrg(data[0].id);
      },
      () => setOrgs([]),
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [session]);

  useEffect(() => {
    const page = PAGES.find((candidate) => candidate.slug === slug);
    document.title = `${page?.title ?? 'gw'} · gw dashboard`;
  }, [slug]);

  if (session === undefined) return <Loading what="the dashboard" />;
  if (session === null || !api) return <SignInPage onSignedIn={setSession} />;

  const page = PAGES.find((candidate) => candidate.slug === slug) ?? PAGES[0];
  const Page = page.component;
  const navigate = (event: MouseEvent, target: string) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
    event.preventDefault();
    history.pushState(null, '', BASE + target);
    setSlug(target);
    setMenuOpen(false);
    // Move focus to the new page's content, as a full page load would.
    requestAnimationFrame(() => mainRef.current?.focus());
  };

  return (
    <PageContextValue.Provider value={{ api, session, orgId, orgs }}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">gw</span>
        <button type="button" class="menu-toggle" aria-expanded={menuOpen} aria-controls="nav" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        {session.scope === 'master' ? (
          <label class="org-picker">
            Organization
            <select value={chosenOrg} onChange={(event) => setChosenOrg(event.currentTarget.value)}>
              <option value="">All organizations</option>
              {orgs.map((org) => (
                <option key={org.id} value={org.id}>
                  {org.name}
                </option>
              ))}
            </select>
          </label>
        ) : (
          <span class="org-picker">Organization: {orgs.find((org) => org.id === orgId)?.name ?? orgId}</span>
        )}
        <span class="who">{session.scope === 'master' ? 'Master' : 'Org admin'}</span>
        <button
          type="button"
          onClick={async () => {
            await signOut(session).catch(() => undefined);
            setSession(null);
          }}
        >
          Sign out
        </button>
      </header>
      <div class="layout">
        <nav id="nav" class={menuOpen ? 'open' : ''} aria-label="Pages">
          <ul>
            {PAGES.map((candidate) => (
              <li key={candidate.slug}>
                <a href={BASE + candidate.slug} aria-current={candidate.slug === slug ? 'page' : undefined} onClick={(event) => navigate(event, candidate.slug)}>
                  {candidate.title}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <main id="main" ref={mainRef} tabIndex={-1}>
          <Page key={`${page.slug}-${orgId ?? 'all'}`} />
        </main>
      </div>
    </PageContextValue.Provider>
  );
}
