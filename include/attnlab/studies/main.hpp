#pragma once
// What each binary of studies/ runs, behind a header that includes nothing: the thin executables compile in a moment
// instead of parsing the whole study layer (12 s each under the sanitizers).

namespace attnlab::studies {

// run_study(argc, argv, find_study(name)): the study's exit code; an unknown name is a programming error and throws.
int study_main(int argc, char** argv, const char* name);

}  // namespace attnlab::studies
