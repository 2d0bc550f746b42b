// The media test caller is the benchmark's caller: one copy, in scripts/bench/.
export { MediaClient, NativeMediaClient, TwilioMediaClient, type ReceivedAudio } from "../../scripts/bench/media-caller.js";
