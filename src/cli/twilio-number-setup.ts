import type { Config } from "../config.js";
import { TwilioApi, type TwilioIncomingNumber } from "../telephony/carriers/twilio/twilio-api.js";
import { TWILIO_PATHS } from "../telephony/carriers/twilio/twilio-carrier.js";
import { UsageError } from "./args.js";

/** The Twilio settings `--configure` needs, checked before anything is added or sent. */
export function twilioNumberSetup(config: Config): { api: TwilioApi; voiceUrl: string } {
  const { accountSid, authToken, apiUrl } = config.twilio;
  if (!accountSid || !authToken) throw new UsageError("--configure needs PARLEY_TWILIO_ACCOUNT_SID and PARLEY_TWILIO_AUTH_TOKEN");
  if (!/^https?:\/\//.test(config.baseUrl)) throw new UsageError("--configure needs PARLEY_BASE_URL: the public URL Twilio reaches this service at");
  return { api: new TwilioApi({ accountSid, authToken, apiUrl }), voiceUrl: `${config.baseUrl.replace(/\/+$/, "")}${TWILIO_PATHS.voice}` };
}

/** The Twilio account's number `phoneNumber`; fails, naming it, when the account does not hold it. */
export async function findTwilioNumber(setup: { api: TwilioApi }, phoneNumber: string): Promise<TwilioIncomingNumber> {
  const found = await setup.api.findIncomingNumber(phoneNumber);
  if (!found) throw new UsageError(`the Twilio account has no number ${phoneNumber}: buy or port it there first`);
  return found;
}

/** Points the number's voice webhook at Parley (VoiceUrl, POST): nothing is left to set in Twilio's console. */
export async function pointAtParley(setup: { api: TwilioApi; voiceUrl: string }, found: TwilioIncomingNumber): Promise<{ sid: string; voice_url: string }> {
  const updated = await setup.api.setVoiceUrl(found.sid, setup.voiceUrl);
  return { sid: updated.sid, voice_url: updated.voiceUrl ?? setup.voiceUrl };
}
