/**
 * @stdlib/stats-kstest ships the Marsaglia–Tsang–Wang CDF of the one-sample Kolmogorov statistic
 * as a file of its own but declares types only for the test; the drift scan needs the CDF itself.
 */
declare module '@stdlib/stats-kstest/lib/marsaglia.js' {
  /** P(D_n < d) for the two-sided one-sample statistic D_n of n observations. */
  function pKolmogorov(d: number, n: number): number;
  export = pKolmogorov;
}
