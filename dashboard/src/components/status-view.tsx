import type { ComponentChildren } from 'preact';
import type { Resource } from '../use-resource.js';

export function Loading({ what }: { what: string }) {
  return (
    <p class="status" role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="status empty">{children}</p>;
}

export function ErrorMessage({ message, onRetry }: { message: string; onRetry?: () => void }) {
  return (
    <div class="status error" role="alert">
      <p>{message}</p>
      {onRetry && (
        <button type="button" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}

export function Unavailable({ feature }: { feature: string }) {
  return (
    <p class="status unavailable" role="status">
      {feature} is not available on this gateway.
    </p>
  );
}

/** Renders a resource's loading, error, "not available" and ready states the same way everywhere. */
export function ResourceView<T>(props: { resource: Resource<T>; what: string; feature?: string; children: (data: T) => ComponentChildren }) {
  const { resource } = props;
  if (resource.state === 'loading') return <Loading what={props.what} />;
  if (resource.state === 'error') {
    if (resource.error.unavailable) return <Unavailable feature={props.feature ?? props.what} />;
    return <ErrorMessage message={`Could not load ${props.what}: ${resource.error.message}`} onRetry={resource.reload} />;
  }
  return <>{props.children(resource.data)}</>;
}
