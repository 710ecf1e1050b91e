/**
 * GPIO switches: `--gpio <pin>=<label>` marks `label` for as long as the switch on BCM pin `pin`
 * is held (input high: begin; low: end), through the `onoff` package. When it is not installed
 * the capture says so at start and records without switches.
 */
import { packageInstalled } from '../adapters/backends/fixes';
import type { MarkAction } from '../workspace/types';

export const GPIO_PACKAGE = 'onoff';

/** Parses `--gpio 17=horn,27=brake`. */
export function parseGpioBindings(spec: string | undefined): Map<number, string> {
  const pins = new Map<number, string>();
  if (spec === undefined || spec.trim() === '') return pins;
  for (const part of spec.split(',')) {
    const m = /^(\d{1,3})=(.+)$/.exec(part.trim());
    if (m === null) throw new Error(`--gpio entry '${part.trim()}' is not <pin>=<label>`);
    const pin = Number(m[1]);
    if (pins.has(pin)) throw new Error(`--gpio binds pin ${pin} twice`);
    pins.set(pin, m[2]!.trim());
  }
  return pins;
}

interface OnoffGpio {
  watch(callback: (err: Error | null | undefined, value: number) => void): void;
  unexport(): void;
}
interface OnoffModule {
  Gpio: new (pin: number, direction: 'in', edge: 'both', options: { debounceTimeout: number }) => OnoffGpio;
}

/** Watches the switches, or returns `unavailable` with the reason when the GPIO library is missing. */
export async function startGpio(
  pins: ReadonlyMap<number, string>,
  mark: (label: string, action: MarkAction) => void,
): Promise<{ stop: () => void } | { unavailable: string }> {
  if (!packageInstalled(GPIO_PACKAGE)) {
    return {
      unavailable: `no GPIO library is installed (npm install ${GPIO_PACKAGE} -w canlab, on a board with GPIO); recording without switches`,
    };
  }
  // a variable specifier: the package is optional and has no types here
  const moduleName = GPIO_PACKAGE;
  const { Gpio } = (await import(moduleName)) as OnoffModule;
  const lines: OnoffGpio[] = [];
  for (const [pin, label] of pins) {
    const line = new Gpio(pin, 'in', 'both', { debounceTimeout: 20 });
    line.watch((err, value) => {
      if (!err) mark(label, value === 1 ? 'begin' : 'end');
    });
    lines.push(line);
  }
  return { stop: () => lines.forEach((l) => l.unexport()) };
}
