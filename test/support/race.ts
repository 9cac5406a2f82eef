/**
 * Two writers of one document at once, round after round (FerretDB v1 writes an update back as
 * the whole document it read): the second starts 0-7 ms after the first, so the rounds cover the
 * ways the two can overlap.
 */
export const RACE_ROUNDS = 40;

export const raceOffset = (round: number) => new Promise((resolve) => setTimeout(resolve, round % 8));
