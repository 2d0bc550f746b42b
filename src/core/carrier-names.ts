/** The carriers Parley places calls through (PARLEY_CARRIER, a number's `carrier`); apart from the configuration so the CLI's help can list them without loading it. */
export const CARRIERS = ["simulator", "sip", "twilio", "telnyx", "vonage"] as const;
export type CarrierName = (typeof CARRIERS)[number];
