import { useEffect, useRef } from 'preact/hooks';

/**
 * Listens to key presses on the window with the handler of the newest render. The handler is
 * swapped during render, not in an effect: effects run after the browser paints, so a key pressed
 * right after a dialog appears would otherwise reach the handler of the render before it.
 */
export function useKeydown(handler: (e: KeyboardEvent) => void): void {
  const latest = useRef(handler);
  latest.current = handler;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => latest.current(e);
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
}
