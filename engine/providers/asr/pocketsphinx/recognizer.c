/*
 * Parley's embedded speech recognizer: a long-lived process around pocketsphinx
 * (0.8+5prealpha, sphinxbase API). It loads the US-English model once, then decodes
 * utterances as their audio arrives, so the final hypothesis is ready soon after the
 * utterance ends. One process serves one call at a time; the engine pools them.
 *
 * Usage: pocketsphinx-recognizer [MODEL_DIR]
 *   MODEL_DIR holds en-us/ (acoustic model), en-us.lm.bin and cmudict-en-us.dict
 *   (default /usr/share/pocketsphinx/model/en-us).
 *
 * Requests on stdin: a 5-byte header, [type: u8][payload length: u32 little-endian],
 * then the payload.
 *   'S' START_UTT  payload: utterance id (u32 LE); ends any utterance still open
 *   'A' AUDIO      payload: mono PCM16 LE samples at 16 kHz (ignored outside an utterance)
 *   'E' END_UTT    no payload; replies with the utterance's final
 *   'C' CANCEL     payload: utterance id (u32 LE); ends that utterance, if still open, without
 *                  a reply (the id keeps a late cancel from ending the next utterance)
 *   'R' RESET      no payload; a new call: forgets what earlier calls taught the decoder
 *   'G' GRAMMAR    payload: a JSGF grammar (UTF-8) of what the next utterances are expected
 *                  to say; empty: none. The general language model still decodes each
 *                  utterance (partials and "text" are its own); a second decoder decodes the
 *                  same audio with the grammar as it arrives, and the final carries both (the
 *                  engine chooses). Two decoders side by side, rather than the grammar's pass
 *                  after the utterance's end, keep the final as soon after the end as without.
 *                  Ends any utterance still open. A grammar that does not compile is
 *                  reported ({"type":"error","utt":0,...}) and none is used.
 *   'M' SET_MEAN   payload: the channel's cepstral mean, one float32 LE per coefficient (as a
 *                  final reported it): a call's recognition goes on from where another
 *                  process of the pool left it (recognizers are leased per stretch of speech)
 *   'Q' SHUTDOWN   no payload; exits 0 (so does end of input)
 * Replies on stdout, one JSON object per line:
 *   {"type":"ready"}                               once the model is loaded
 *   {"type":"partial","utt":N,"text":"..."}        every 300 ms of audio, when it changed
 *   {"type":"final","utt":N,"text":"...","mean":[...]}  after END_UTT (text may be empty);
 *                                                  mean: the channel's cepstral mean now.
 *                  With a grammar, also "expected":"..." (the grammar's text; empty when no
 *                  path through the grammar accounts for the utterance)
 *   {"type":"error","utt":N,"message":"..."}       a failed utterance; the process goes on
 * A malformed request cannot be resynchronised: the process reports it and exits 2.
 * pocketsphinx's own log is dropped except for errors, which go to stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pocketsphinx.h>
#include <sphinxbase/cmn.h>
#include <sphinxbase/err.h>
#include <sphinxbase/feat.h>

#define DEFAULT_MODEL_DIR "/usr/share/pocketsphinx/model/en-us"
#define SAMPLE_RATE 16000
/* How often the live mean moves and a partial may be sent. */
#define TICK_SAMPLES (SAMPLE_RATE * 3 / 10)
/* 0.2 s of 10 ms frames: the prior only steadies the first words of a call. */
#define CMN_PRIOR_FRAMES 20
/* 1 s: a mean learnt from the call's own channel is worth more than the model's prior. */
#define CMN_CARRIED_FRAMES 100
/* 32 s of audio: far above the engine's 20 ms frames, small enough to refuse garbage. */
#define MAX_PAYLOAD (1u << 20)

/*
 * Set while a grammar decodes. The only error it logs is that no path through the grammar
 * ends the utterance ("Final result does not match the grammar"): the hypothesis is then a
 * partial path that may mix the grammar's branches, and counts as none (grammar_unmatched).
 */
static int grammar_decoding = 0;
static int grammar_unmatched = 0;

static void log_errors_only(void *user_data, err_lvl_t level, const char *fmt, ...) {
    (void)user_data;
    if (level < ERR_ERROR) return;
    if (grammar_decoding) {
        grammar_unmatched = 1;
        return;
    }
    va_list args;
    va_start(args, fmt);
    fputs("pocketsphinx: ", stderr);
    vfprintf(stderr, fmt, args);
    va_end(args);
}

/* Starts the live mean from `initial`, weighted like `frames` of audio (cmn_t's fields are public in sphinxbase). */
static void reset_cmn(cmn_t *cmn, const mfcc_t *initial, int32 frames) {
    for (int32 i = 0; i < cmn->veclen; i++) {
        cmn->cmn_mean[i] = initial[i];
        cmn->sum[i] = initial[i] * frames;
    }
    cmn->nframe = frames;
}

static void write_json_string(const char *text) {
    putchar('"');
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        if (*c == '"' || *c == '\\') printf("\\%c", *c);
        else if (*c < 0x20) printf("\\u%04x", *c);
        else putchar(*c);
    }
    putchar('"');
}

static void reply_text(const char *type, uint32_t utt, const char *text) {
    printf("{\"type\":\"%s\",\"utt\":%u,\"text\":", type, utt);
    write_json_string(text ? text : "");
    fputs("}\n", stdout);
    fflush(stdout);
}

/*
 * The final of an utterance, with the channel mean it leaves (SET_MEAN takes it back); with a
 * grammar, `expected` is what it made of the utterance ("" when nothing), else NULL.
 */
static void reply_final(uint32_t utt, const char *text, const char *expected, const cmn_t *cmn) {
    printf("{\"type\":\"final\",\"utt\":%u,\"text\":", utt);
    write_json_string(text ? text : "");
    if (expected) {
        fputs(",\"expected\":", stdout);
        write_json_string(expected);
    }
    fputs(",\"mean\":[", stdout);
    for (int32 i = 0; i < cmn->veclen; i++) printf(i ? ",%.6g" : "%.6g", (double)cmn->cmn_mean[i]);
    fputs("]}\n", stdout);
    fflush(stdout);
}

static void reply_error(uint32_t utt, const char *message) {
    printf("{\"type\":\"error\",\"utt\":%u,\"message\":", utt);
    write_json_string(message);
    fputs("}\n", stdout);
    fflush(stdout);
}

/* Reads exactly n bytes; returns 1, or 0 at end of input before the first byte. */
static int read_exact(void *buffer, size_t n) {
    size_t done = 0;
    while (done < n) {
        ssize_t got = read(STDIN_FILENO, (char *)buffer + done, n - done);
        if (got > 0) done += (size_t)got;
        else if (got < 0 && errno == EINTR) continue;
        else if (got == 0 && done == 0) return 0;
        else {
            fprintf(stderr, "recognizer: input ended inside a message\n");
            exit(2);
        }
    }
    return 1;
}

static uint32_t le32(const unsigned char *b) {
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/*
 * Compiles `grammar` as the grammar decoder's "expected" search and selects it; -1 when it
 * does not compile.
 * sphinxbase's JSGF lexer echoes input it cannot read to stdout, which is this process's
 * reply channel: stdout goes to /dev/null while it parses.
 */
static int set_grammar(ps_decoder_t *ps, const char *grammar) {
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    int devnull = open("/dev/null", O_WRONLY);
    if (saved < 0 || devnull < 0) {
        if (saved >= 0) close(saved);
        if (devnull >= 0) close(devnull);
        return -1;
    }
    dup2(devnull, STDOUT_FILENO);
    close(devnull);
    int result = ps_set_jsgf_string(ps, "expected", grammar);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    return result < 0 ? -1 : ps_set_search(ps, "expected");
}

/* The grammar decoder's words for the utterance it has just ended ("" when no path through the grammar ends it), as a new string. */
static char *grammar_words(ps_decoder_t *gs) {
    grammar_decoding = 1;
    grammar_unmatched = 0;
    const char *hyp = ps_end_utt(gs) == 0 ? ps_get_hyp(gs, NULL) : NULL;
    grammar_decoding = 0;
    return strdup(hyp && !grammar_unmatched ? hyp : "");
}

/* Starts the grammar decoder's utterance from the general decoder's channel mean (both hear the same audio). */
static int start_grammar_utterance(ps_decoder_t *gs, const cmn_t *general) {
    cmn_t *cmn = ps_get_feat(gs)->cmn_struct;
    reset_cmn(cmn, general->cmn_mean, general->nframe);
    return ps_start_utt(gs) == 0;
}

static void protocol_error(const char *message) {
    reply_error(0, message);
    fprintf(stderr, "recognizer: %s\n", message);
    exit(2);
}

int main(int argc, char *argv[]) {
    const char *model_dir = argc > 1 ? argv[1] : DEFAULT_MODEL_DIR;
    char hmm[4096], lm[4096], dict[4096];
    snprintf(hmm, sizeof hmm, "%s/en-us", model_dir);
    snprintf(lm, sizeof lm, "%s/en-us.lm.bin", model_dir);
    snprintf(dict, sizeof dict, "%s/cmudict-en-us.dict", model_dir);

    /* No log file (that also drops the configuration dump); errors still reach the callback. */
    err_set_logfp(NULL);
    err_set_callback(log_errors_only, NULL);
    cmd_ln_t *config = cmd_ln_init(NULL, ps_args(), TRUE, "-hmm", hmm, "-lm", lm, "-dict", dict,
                                   "-samprate", "16000", NULL);
    ps_decoder_t *ps = config ? ps_init(config) : NULL;
    if (!ps) {
        fprintf(stderr, "recognizer: cannot load the pocketsphinx model from %s\n", model_dir);
        return 1;
    }
    /* The grammar decoder: the same acoustic model and dictionary, no language model (~40 MB more). */
    cmd_ln_t *grammar_config = cmd_ln_init(NULL, ps_args(), TRUE, "-hmm", hmm, "-dict", dict, "-samprate", "16000", NULL);
    ps_decoder_t *gs = grammar_config ? ps_init(grammar_config) : NULL;
    if (!gs) {
        fprintf(stderr, "recognizer: cannot load the grammar decoder from %s\n", model_dir);
        return 1;
    }
    /*
     * Streaming decoding uses live cepstral mean normalisation (CMN). As shipped, the mean
     * starts from the model's 16 kHz prior weighted like 5 s of speech and moves only at the
     * end of an utterance, so a call's first utterance on another channel (8 kHz telephony)
     * is read against the wrong mean. Each call instead starts from the prior weighted like
     * CMN_PRIOR_FRAMES and the mean follows the audio every 300 ms; RESET also keeps one
     * call's channel from leaking into the next call served by this process.
     */
    cmn_t *cmn = ps_get_feat(ps)->cmn_struct;
    mfcc_t *initial_cmn = malloc(sizeof(mfcc_t) * cmn->veclen);
    if (!initial_cmn) return 1;
    cmn_live_get(cmn, initial_cmn);
    if (cmn->veclen > 64) {
        fprintf(stderr, "recognizer: the model has more cepstral coefficients (%d) than this process takes (64)\n", cmn->veclen);
        return 1;
    }
    reset_cmn(cmn, initial_cmn, CMN_PRIOR_FRAMES);


    fputs("{\"type\":\"ready\"}\n", stdout);
    fflush(stdout);

    int16_t *samples = malloc(MAX_PAYLOAD);
    if (!samples) return 1;
    int grammar_on = 0;
    /* The grammar decoder is in the open utterance. */
    int grammar_live = 0;
    char *current_grammar = NULL;
    int in_utt = 0;
    uint32_t utt = 0;
    size_t since_tick = 0;
    char *last_partial = NULL;

    unsigned char header[5];
    while (read_exact(header, sizeof header)) {
        uint32_t length = le32(header + 1);
        if (length > MAX_PAYLOAD) protocol_error("message longer than 1 MiB");
        if (length > 0) read_exact(samples, length);

        switch (header[0]) {
        case 'S':
            if (length != 4) protocol_error("START_UTT needs a 4-byte utterance id");
            if (in_utt) ps_end_utt(ps);
            if (grammar_live) ps_end_utt(gs);
            grammar_live = 0;
            utt = le32((const unsigned char *)samples);
            since_tick = 0;
            free(last_partial);
            last_partial = NULL;
            in_utt = ps_start_utt(ps) == 0;
            if (!in_utt) reply_error(utt, "ps_start_utt failed");
            else if (grammar_on) grammar_live = start_grammar_utterance(gs, cmn);
            break;
        case 'A':
            if (length % 2) protocol_error("AUDIO payload is not whole PCM16 samples");
            if (!in_utt) break;
            /* A grammar decoder that fails leaves the utterance to the general model ("expected" empty). */
            if (grammar_live && ps_process_raw(gs, samples, length / 2, FALSE, FALSE) < 0) {
                ps_end_utt(gs);
                grammar_live = 0;
            }
            if (ps_process_raw(ps, samples, length / 2, FALSE, FALSE) < 0) {
                ps_end_utt(ps);
                in_utt = 0;
                if (grammar_live) ps_end_utt(gs);
                grammar_live = 0;
                reply_error(utt, "ps_process_raw failed");
                break;
            }
            since_tick += length / 2;
            if (since_tick >= TICK_SAMPLES) {
                since_tick = 0;
                cmn_live_update(cmn);
                if (grammar_live) cmn_live_update(ps_get_feat(gs)->cmn_struct);
                const char *hyp = ps_get_hyp(ps, NULL);
                if (hyp && *hyp && (!last_partial || strcmp(hyp, last_partial) != 0)) {
                    free(last_partial);
                    last_partial = strdup(hyp);
                    reply_text("partial", utt, hyp);
                }
            }
            break;
        case 'E': {
            if (!in_utt) break;
            in_utt = 0;
            if (ps_end_utt(ps) < 0) {
                reply_error(utt, "ps_end_utt failed");
                break;
            }
            const char *general = ps_get_hyp(ps, NULL);
            char *expected = grammar_live ? grammar_words(gs) : grammar_on ? strdup("") : NULL;
            grammar_live = 0;
            reply_final(utt, general, expected, cmn);
            free(expected);
            break;
        }
        case 'C':
            if (length != 4) protocol_error("CANCEL needs a 4-byte utterance id");
            if (in_utt && le32((const unsigned char *)samples) == utt) {
                ps_end_utt(ps);
                in_utt = 0;
                if (grammar_live) ps_end_utt(gs);
                grammar_live = 0;
            }
            break;
        case 'R':
            if (in_utt) ps_end_utt(ps);
            in_utt = 0;
            if (grammar_live) ps_end_utt(gs);
            grammar_live = 0;
            reset_cmn(cmn, initial_cmn, CMN_PRIOR_FRAMES);
            break;
        case 'M': {
            if (length != (uint32_t)cmn->veclen * 4) protocol_error("SET_MEAN needs one float32 per cepstral coefficient");
            if (in_utt) ps_end_utt(ps);
            in_utt = 0;
            if (grammar_live) ps_end_utt(gs);
            grammar_live = 0;
            mfcc_t mean[64];
            for (int32 i = 0; i < cmn->veclen; i++) {
                float value;
                uint32_t bits = le32((const unsigned char *)samples + 4 * i);
                memcpy(&value, &bits, sizeof value);
                mean[i] = value;
            }
            reset_cmn(cmn, mean, CMN_CARRIED_FRAMES);
            break;
        }
        case 'G': {
            if (in_utt) ps_end_utt(ps);
            in_utt = 0;
            if (grammar_live) ps_end_utt(gs);
            grammar_live = 0;
            if (length == 0) {
                grammar_on = 0;
                break;
            }
            /* The same grammar as before (the engine sends one per utterance) is not compiled again. */
            if (grammar_on && current_grammar && strlen(current_grammar) == length && memcmp(current_grammar, samples, length) == 0) break;
            grammar_on = 0;
            free(current_grammar);
            current_grammar = malloc(length + 1);
            if (!current_grammar) protocol_error("out of memory for a grammar");
            memcpy(current_grammar, samples, length);
            current_grammar[length] = '\0';
            if (set_grammar(gs, current_grammar) < 0) {
                reply_error(0, "the grammar does not compile (JSGF); none is used");
            } else {
                grammar_on = 1;
            }
            break;
        }
        case 'Q':
            ps_free(gs);
            ps_free(ps);
            return 0;
        default:
            protocol_error("unknown message type");
        }
    }
    ps_free(gs);
    ps_free(ps);
    return 0;
}
