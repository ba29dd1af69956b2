// Code templates: substitution rules and their diagnostics.
#include <gtest/gtest.h>

#include "emit/template.h"
#include "language/diagnostic.h"

namespace backendbench::emit {
namespace {

std::string render_error(const std::string& text, const TemplateEnvironment& environment) {
  try {
    CodeTemplate(text, "x.in").render(environment);
  } catch (const DiagnosticError& error) {
    return error.what();
  }
  return "no error";
}

TEST(CodeTemplate, SubstitutesInlineStrings) {
  EXPECT_EQ(CodeTemplate("int ${name} = ${value};\n", "x.in").render({{"name", std::string("x")}, {"value", std::string("1")}}),
            "int x = 1;\n");
}

TEST(CodeTemplate, ExpandsAListAloneOnItsLineWithItsIndentation) {
  const CodeTemplate code("f() {\n  ${body}\n}\n", "x.in");
  EXPECT_EQ(code.render({{"body", std::vector<std::string>{"a();", "if (x) {\n  b();\n}"}}}),
            "f() {\n  a();\n  if (x) {\n    b();\n  }\n}\n");
  EXPECT_EQ(code.render({{"body", std::vector<std::string>{}}}), "f() {\n}\n");
}

TEST(CodeTemplate, JoinsAnInlineList) {
  EXPECT_EQ(CodeTemplate("f(${args});", "x.in").render({{"args", std::vector<std::string>{"a", "b"}}}), "f(a, b);");
}

TEST(CodeTemplate, UnknownPlaceholderIsAnError) {
  EXPECT_EQ(render_error("a\n  ${nope}\n", {{"known", std::string("1")}}),
            "x.in:2:3: error: unknown placeholder 'nope'; expected one of known");
}

TEST(CodeTemplate, UnusedValueIsAnError) {
  EXPECT_EQ(render_error("plain\n", {{"extra", std::string("1")}}),
            "x.in: error: value 'extra' is not used by the template; expected a ${extra} placeholder, or no such value");
}

TEST(CodeTemplate, MalformedPlaceholderIsAnError) {
  EXPECT_EQ(render_error("${a-b}", {}), "x.in:1:1: error: malformed placeholder; expected ${name} with a name of [A-Za-z0-9_]");
  EXPECT_EQ(render_error("x ${open", {}), "x.in:1:3: error: malformed placeholder; expected ${name} with a name of [A-Za-z0-9_]");
}

TEST(CodeTemplate, LeavesOtherDollarsAlone) {
  EXPECT_EQ(CodeTemplate("echo $HOME $(x)\n", "x.in").render({}), "echo $HOME $(x)\n");
}

TEST(CodeTemplate, MissingFileIsAnError) {
  try {
    CodeTemplate::load("/nonexistent/t.in");
    FAIL();
  } catch (const DiagnosticError& error) {
    EXPECT_STREQ(error.what(), "/nonexistent/t.in: error: cannot read the template; expected a readable file in templates/");
  }
}

}  // namespace
}  // namespace backendbench::emit
