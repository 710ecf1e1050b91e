/**
 * Vendor backends whose drivers and Node bindings are not part of canlab's installation. Each
 * refuses by name, saying which driver or package is missing and the working alternative (on
 * Linux all four vendors' adapters have kernel drivers that expose them as SocketCAN).
 */
import { existsSync } from 'node:fs';
import type { AdapterConfig, BackendId } from '../types';
import { AdapterUnavailableError } from '../types';

interface VendorDriver {
  /** What would be needed to talk to the adapter natively. */
  needs: string;
  /** Linux kernel module that exposes the adapter as a SocketCAN interface. */
  kernelModule: string;
  fix: string;
}

const SOCKETCAN_ROUTE =
  'the adapter then appears as canN: use --interface socketcan --channel canN (after ip link set canN up type can bitrate N)';

export const VENDOR_DRIVERS: Readonly<
  Record<Extract<BackendId, 'gs_usb' | 'pcan' | 'kvaser' | 'vector' | 'ixxat'>, VendorDriver>
> = {
  gs_usb: {
    needs:
      "direct USB access needs the 'usb' npm package (libusb), which is not installed, and canlab ships no gs_usb USB driver",
    kernelModule: 'gs_usb',
    fix: `load the kernel driver (sudo modprobe gs_usb); ${SOCKETCAN_ROUTE}`,
  },
  pcan: {
    needs:
      "PEAK's PCAN-Basic library (libpcanbasic.so / PCANBasic.dll) and a Node binding for it are not installed",
    kernelModule: 'peak_usb',
    fix: `load PEAK's mainline kernel driver (sudo modprobe peak_usb, or peak_pci); ${SOCKETCAN_ROUTE}`,
  },
  kvaser: {
    needs:
      "Kvaser CANlib (libcanlib.so from Kvaser's linuxcan package, canlib32.dll on Windows) and a Node binding for it are not installed",
    kernelModule: 'kvaser_usb',
    fix: `load the mainline kernel driver (sudo modprobe kvaser_usb, or kvaser_pciefd); ${SOCKETCAN_ROUTE}`,
  },
  vector: {
    needs:
      'the Vector XL Driver Library (vxlapi64.dll, Windows only) and a Node binding for it are not installed',
    kernelModule: 'vector_xl',
    fix: "Vector interfaces need Vector's XL Driver Library on Windows, which canlab does not bind; record with another adapter, or export a .blf/.asc from CANalyzer and load that",
  },
  ixxat: {
    needs: 'the IXXAT VCI (Windows) or ECI (Linux) driver and a Node binding for it are not installed',
    kernelModule: 'ixx_usb',
    fix: `install HMS's SocketCAN driver for IXXAT USB-to-CAN (module ixx_usb) and load it; ${SOCKETCAN_ROUTE}`,
  },
};

export type VendorBackend = keyof typeof VENDOR_DRIVERS;

export function isVendorBackend(backend: BackendId): backend is VendorBackend {
  return Object.hasOwn(VENDOR_DRIVERS, backend);
}

/** Always refuses: names the missing driver and whether the SocketCAN route's kernel module is loaded. */
export function refuseVendorBackend(adapter: AdapterConfig & { backend: VendorBackend }): never {
  const driver = VENDOR_DRIVERS[adapter.backend];
  const loaded = existsSync(`/sys/module/${driver.kernelModule}`);
  throw new AdapterUnavailableError(
    adapter,
    `${driver.needs} (kernel module ${driver.kernelModule} ${loaded ? 'is loaded' : 'is not loaded'})`,
    driver.fix,
  );
}
