/**
 * The engine's public surface: the only module the control plane imports.
 */
export type { AgentSettings, DialogueIntent, EndpointingMode } from "./types.js";
export { ENDPOINTING_MODES } from "./types.js";
export { KNOWLEDGE_SEARCH_TOOL, NO_TOOLS, type KnowledgePassage, type ToolDefinition, type ToolExecutor, type ToolResult } from "./tools.js";
export type { VoiceInfo } from "./providers/tts/voice.js";
export type { CallAction, CallEvent, CallEndReason, TranscriptSegment, TurnMetrics } from "./call-events.js";
export {
  ANALYSIS_FIELD_TYPES,
  CALL_OUTCOMES,
  type AnalysisField,
  type AnalysisFieldType,
  type AnalysisInput,
  type CallAnalysis,
  type CallOutcome,
  type FieldValue,
} from "./analysis/call-analysis.js";
export { CallAnalyzer, DEFAULT_ANALYSIS_TIMEOUT_MS, type CallAnalyzerOptions } from "./analysis/call-analyzer.js";
export { BUILT_IN_DATA_KEYS, analyzeByRules } from "./analysis/rules-call-analysis.js";
export { transferBriefing, type BriefingInput } from "./analysis/transfer-briefing.js";
export { REMINDER_PURPOSE } from "./providers/llm/rules/reminder-conversation.js";
export { spokenDate, spokenTime } from "./providers/llm/rules/spoken-date-time.js";
export { readServices } from "./providers/llm/rules/agent-profile.js";
export type { CallSummary } from "./call-session.js";
export type { LiveCall, LiveCallOptions } from "./live-call.js";
export { callLatency, turnLatency, type CallLatency, type TurnLatency } from "./call-latency.js";
export { engineVoices, type Engine, type EngineOptions, type EngineUsage } from "./engine.js";
export { createEngine } from "./workers/session-worker-pool.js";
export { PROVIDER_STAGES, type ProviderStage } from "./providers/provider-error.js";
export { PROVIDERS, ProviderSettingsError, providerSettings, providersOf, findProvider, type ProviderChoice } from "./providers/provider-registry.js";
export type { ProviderDefinition } from "./providers/provider-definition.js";
export type { ProviderSwitch } from "./providers/provider-chain.js";
export type { ProviderRequest } from "./providers/provider-measurement.js";
export { VAD_NAMES, type VadName } from "./vad/vad-factory.js";
export type { MediaTransport, TransportEvents } from "./transports/transport.js";
export type { AudioFrame } from "./audio/audio-frame.js";
export { systemClock, type Clock, type TimerHandle } from "./audio/clock.js";
export { NativeTransport } from "./transports/websocket/native-transport.js";
export { NATIVE_FORMATS, NATIVE_OPUS_RATES, NATIVE_PCM_RATES, type NativeFormat } from "./transports/websocket/native-protocol.js";
export { TwilioTransport } from "./transports/websocket/twilio-transport.js";
export { TelnyxTransport, type TelnyxStartInfo } from "./transports/websocket/telnyx-transport.js";
export { VonageTransport, type VonageStartInfo } from "./transports/websocket/vonage-transport.js";
export { Resampler } from "./audio/resampler.js";
export { EmbeddedSpeech } from "./providers/tts/embedded-speech.js";
export { REDACTION_KINDS, checkRedactSetting, compileRedaction, type Redaction, type RedactionKind, type RedactSetting, type CustomRedactionRule } from "./text/redaction/redaction-rules.js";
export { redactText, redactJson } from "./text/redaction/redact-text.js";
export { redactTranscript, type RedactedStretch } from "./text/redaction/redact-transcript.js";
export { toneOverStretches } from "./recording/recording-redaction.js";
export { SUPERVISOR_TEXT_MAX_CHARS, supervisorText } from "./supervisor-text.js";
export { bytesToPcm16, pcm16ToBytes, rms } from "./audio/pcm16.js";
export { encodeWav, parseWav } from "./audio/wav.js";
export { monoAt } from "./audio/mono-at.js";
export { SipUserAgent, DEFAULT_MAX_CALLS, type SipUserAgentOptions } from "./transports/sip/sip-user-agent.js";
export { IncomingCall } from "./transports/sip/incoming-call.js";
export { DEFAULT_MAX_SERVER_TRANSACTIONS } from "./transports/sip/transaction-layer.js";
export { SipCallTransport } from "./transports/sip/sip-call-transport.js";
export { SipCallError } from "./transports/sip/sip-call.js";
export { DEFAULT_RTP_TIMEOUT_MS } from "./transports/sip/rtp-session.js";
export { unmapIpv4 } from "./transports/sip/ip-address.js";
export { packageRoot } from "./package-root.js";
export type { DigestCredentials } from "./transports/sip/digest-auth.js";
