/** The time source; tests pass their own to control what "now" is. */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();

/**
 * `clock`'s time in milliseconds, as a function: Date.now itself for the system clock, so a hot path
 * (the credentials of every request) reads the time without making a Date.
 */
export const millisOf = (clock: Clock): (() => number) => (clock === systemClock ? Date.now : () => clock().getTime());
