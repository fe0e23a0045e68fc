import { useEffect } from 'preact/hooks';
import { LocationProvider, Route, Router, useLocation } from 'preact-iso';
import { pagePath } from './base';
import { session, signOut, type Role } from './session';
import { SignIn } from './pages/sign-in';
import { DevicesPage } from './pages/devices';
import { DropdownsPage } from './pages/dropdowns';
import { WebhooksPage } from './pages/webhooks';
import { OperatorPage } from './pages/operator';

interface PageEntry {
  page: string;
  title: string;
  role: Role;
  view: () => preact.JSX.Element;
}

/** The pages, each for one kind of sign-in: a key's owner or the operator. */
const pages: PageEntry[] = [
  { page: 'devices', title: 'Devices', role: 'owner', view: DevicesPage },
  { page: 'dropdowns', title: 'Dropdowns', role: 'owner', view: DropdownsPage },
  { page: 'webhooks', title: 'Webhooks', role: 'owner', view: WebhooksPage },
  { page: 'operator', title: 'Operator', role: 'operator', view: OperatorPage },
];

function Nav() {
  const { path } = useLocation();
  const who = session.value!;
  return (
    <header class="container">
      <nav aria-label="Console">
        <ul>
          <li>
            <strong>Signage console</strong>
          </li>
        </ul>
        <ul>
          {pages
            .filter((p) => p.role === who.role)
            .map((p) => (
              <li key={p.page}>
                <a href={pagePath(p.page)} aria-current={path === pagePath(p.page) ? 'page' : undefined}>
                  {p.title}
                </a>
              </li>
            ))}
          <li>
            <span class="muted">{who.label}</span>
          </li>
          <li>
            <button type="button" class="secondary outline" onClick={() => signOut()}>
              Sign out
            </button>
          </li>
        </ul>
      </nav>
    </header>
  );
}

/** `/console` and a page of the other role lead to the signed-in role's first page. */
function Home() {
  const { route } = useLocation();
  const home = pagePath(pages.find((p) => p.role === session.value?.role)!.page);
  useEffect(() => route(home, true), [home]);
  return null;
}

function Pages() {
  const who = session.value!;
  const allowed = pages.filter((p) => p.role === who.role);
  return (
    <>
      <Nav />
      <main class="container">
        <Router>
          {[...allowed.map((p) => <Route key={p.page} path={pagePath(p.page)} component={p.view} />), <Route key="home" default component={Home} />]}
        </Router>
      </main>
    </>
  );
}

export function App() {
  return <LocationProvider>{session.value ? <Pages /> : <SignIn />}</LocationProvider>;
}
