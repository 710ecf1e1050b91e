import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * The CPU temperature from Linux's thermal zones (/sys/class/thermal/thermal_zone<N>/{type,temp},
 * millidegrees Celsius). Virtual machines and containers often expose none: the reading is then
 * null with the reason, never a guess.
 */
export const THERMAL_ROOT = '/sys/class/thermal';

/** Zone types that are the CPU package or die (x86_pkg_temp on Intel, k10temp/Tctl on AMD, cpu/soc on ARM boards). */
const CPU_ZONE = /x86_pkg|k10temp|tctl|tdie|cpu|soc|acpitz/i;

export interface TemperatureReading {
  celsius: number | null;
  /** The zone the figure comes from, and every zone that could be read. */
  zone: string | null;
  zones: Array<{ zone: string; type: string; celsius: number }>;
  reason: string | null;
}

export async function readCpuTemperature(root = THERMAL_ROOT): Promise<TemperatureReading> {
  const names = await fs.readdir(root).catch((err: NodeJS.ErrnoException) => err);
  if (names instanceof Error)
    return {
      celsius: null,
      zone: null,
      zones: [],
      reason: `${root} cannot be read on this host (${names.code ?? names.message})`,
    };
  const zones: TemperatureReading['zones'] = [];
  for (const zone of names.filter((n) => n.startsWith('thermal_zone')).sort()) {
    const [type, temp] = await Promise.all(
      ['type', 'temp'].map((f) => fs.readFile(path.join(root, zone, f), 'utf8').catch(() => null)),
    );
    const milli = Number(temp?.trim());
    if (temp !== null && temp !== undefined && Number.isFinite(milli))
      zones.push({ zone, type: type?.trim() ?? 'unknown', celsius: milli / 1000 });
  }
  if (!zones.length)
    return {
      celsius: null,
      zone: null,
      zones,
      reason: `${root} has no readable thermal zone on this host (a virtual machine or container exposes none)`,
    };
  const cpu = zones.find((z) => CPU_ZONE.test(z.type)) ?? zones[0]!;
  return { celsius: cpu.celsius, zone: `${cpu.zone} (${cpu.type})`, zones, reason: null };
}
