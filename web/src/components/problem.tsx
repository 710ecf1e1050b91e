/** A failed request, in the API's own words. */
export function Problem({
  message,
  onRetry,
  retryLabel = 'Try again',
}: {
  message: string | null;
  onRetry?: () => void;
  retryLabel?: string;
}) {
  if (!message) return null;
  return (
    <div class="problem" role="alert">
      <span>{message}</span>
      {onRetry && (
        <button type="button" onClick={onRetry}>
          {retryLabel}
        </button>
      )}
    </div>
  );
}
