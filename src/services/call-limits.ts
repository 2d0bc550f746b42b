/** The longest call, in seconds: `max_duration`'s bound and default, whatever carries the call. */
export const MAX_CALL_DURATION_SECONDS = 3600;
