// Recording and replaying a run's model exchanges (--record DIR, --replay DIR), so that a run can
// be repeated offline, with no key, and give the same candidates and so the same verdicts.
//
// A cassette is a folder with one file per question, `<key>.json`, where the key names the
// question's place in its run (`relu__default/w1_r2`: operator folder, worker, round), not its
// text: a replayed run asks the questions of the recorded run in the same places, and its prompts
// may differ where feedback carries figures that vary from run to run. Each file holds the
// request (system text, prompt, API, model: no key), and the answer or the error the model gave;
// cassette.json keeps the recorded run's salt, which a replay uses unless --salt is given.
#pragma once

#include <memory>
#include <string>

#include "agents/model_client.h"

namespace backendbench::agents {

// Wraps `live`: every answer and every model error is written to `directory` before it is
// returned or rethrown.
std::unique_ptr<ModelClient> make_recording_client(std::unique_ptr<ModelClient> live, std::string directory);

// Answers from `directory` only; a question with no recording is a ModelError (kNotRecorded, which
// stops the run's questions) naming the file. A recorded error is thrown again.
std::unique_ptr<ModelClient> make_replay_client(std::string directory);

// The file of `key` in `directory`.
std::string cassette_file(const std::string& directory, const std::string& key);

}  // namespace backendbench::agents
