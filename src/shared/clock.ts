/** The time source; tests pass their own to control what "now" is. */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();
