import type { ComponentChildren } from 'preact';
import { useApp } from '../context';
import { navigate } from '../router';

/** The frame around every signed-in page: where you are, who you are, and the way out. */
export function Shell({ children }: { children: ComponentChildren }) {
  const { api, session } = useApp();
  const link = (href: string, label: string) => (
    <a
      href={href}
      class={window.location.pathname === href ? 'active' : undefined}
      onClick={(e) => {
        e.preventDefault();
        navigate(href);
      }}
    >
      {label}
    </a>
  );
  return (
    <div class="shell">
      <header class="topbar">
        <span class="brand">drivelab review</span>
        <nav>
          {link('/queue', 'Review queue')}
          {link('/review', 'Keyboard review')}
          {link('/grid', 'Crop grid')}
          {link('/editor', 'Frame editor')}
        </nav>
        <span class="who" data-testid="who">
          {session.user.name ?? session.user.email}
          <span class={`role role-${session.user.role}`}>{session.user.role}</span>
        </span>
        <button type="button" class="quiet" onClick={() => api.signOut()}>
          Sign out
        </button>
      </header>
      {children}
    </div>
  );
}
