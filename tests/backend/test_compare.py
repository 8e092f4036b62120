from __future__ import annotations

import math

import pytest

from cudaify.backend.compare import (
    ROUNDING_RTOL,
    compare,
    compare_exit,
    matched_tolerance,
    parse_number,
    rounding_only,
    tokens_match,
)


def test_identical_output_matches() -> None:
    assert compare("sum = 3.5\nn 10\n", "sum = 3.5\nn 10\n") is None


def test_white_space_amount_does_not_matter() -> None:
    assert compare("a  1\n\n2.5\t x", "a 1 2.5\nx\n") is None


@pytest.mark.parametrize(
    ("expected", "actual"),
    [("1.00000", "1.00005"), ("100.0", "100.009"), ("-2.5e-3", "-2.50002e-03"), ("0", "0.0")],
)
def test_floats_within_relative_tolerance_match(expected: str, actual: str) -> None:
    assert compare(expected, actual, rtol=1e-4) is None


@pytest.mark.parametrize(("expected", "actual"), [("1.0", "1.0002"), ("100.0", "100.02")])
def test_floats_outside_relative_tolerance_differ(expected: str, actual: str) -> None:
    problem = compare(expected, actual, rtol=1e-4)
    assert problem is not None
    assert "relative difference" in problem.message


def test_absolute_tolerance_covers_values_near_zero() -> None:
    assert compare("0.0", "1e-12", rtol=1e-4, atol=1e-9) is None
    assert compare("0.0", "1e-6", rtol=1e-4, atol=1e-9) is not None


def test_integers_compare_exactly_even_with_a_loose_tolerance() -> None:
    assert compare("1000000", "1000001", rtol=0.5) is not None
    assert compare("1000000", "1000000", rtol=0.0) is None


def test_integer_against_float_token_compares_with_tolerance() -> None:
    assert compare("3", "3.0000001") is None


@pytest.mark.parametrize("nan", ["nan", "-nan", "NaN", "nan(0x8)"])
def test_nan_is_never_equal_even_to_itself(nan: str) -> None:
    assert compare(nan, nan) is not None
    assert compare("1.0", nan) is not None


def test_infinity_equals_only_same_signed_infinity() -> None:
    assert compare("inf", "inf") is None
    assert compare("-inf", "-INF") is None
    assert compare("inf", "-inf") is not None
    assert compare("inf", "1e308") is not None


@pytest.mark.parametrize(
    ("expected", "actual"),
    [("1.5e+03", "1500"), ("1.5E3", "1.500000e+03"), ("0x1.8p+1", "3.0"), (".5", "0.5")],
)
def test_exponent_and_hex_formats_compare_by_value(expected: str, actual: str) -> None:
    assert compare(expected, actual) is None


def test_words_compare_exactly() -> None:
    problem = compare("result ok", "result OK")
    assert problem is not None and "'ok'" in problem.message and "'OK'" in problem.message


def test_numbers_glued_to_punctuation_compare_as_numbers() -> None:
    assert compare("sum=1.000001,", "sum=1.000002,") is None
    assert compare("sum=1.0,", "sum=2.0,") is not None
    assert compare("sum=1.0,", "total=1.0,") is not None


def test_first_differing_token_is_named_with_index_and_line() -> None:
    problem = compare("a 1\nb 2\nc 3\n", "a 1\nb 7\nc 9\n")
    assert problem is not None
    assert problem.kind == "output"
    assert "token 4" in problem.message and "output line 2" in problem.message
    assert "expected '2', got '7'" in problem.message


def test_missing_tokens_are_reported() -> None:
    problem = compare("1 2 3\n4\n", "1 2 3\n")
    assert problem is not None and "ends early" in problem.message and "'4'" in problem.message


def test_extra_tokens_are_reported() -> None:
    problem = compare("1 2", "1 2 junk")
    assert problem is not None and "extra" in problem.message and "'junk'" in problem.message


def test_empty_outputs_match() -> None:
    assert compare("", "\n") is None


def test_exit_codes_compare_exactly() -> None:
    assert compare_exit(0, 0) is None
    problem = compare_exit(3, 0)
    assert problem is not None and problem.kind == "exit_code" and "expected 3" in problem.message


def test_parse_number_rejects_python_only_spellings() -> None:
    assert parse_number("1_000") is None
    assert parse_number("12abc") is None
    assert parse_number("-7") == -7 and isinstance(parse_number("-7"), int)
    value = parse_number("-nan")
    assert isinstance(value, float) and math.isnan(value)


def test_word_containing_nan_letters_is_a_word() -> None:
    assert tokens_match("banana", "banana", 1e-4, 1e-9)


@pytest.mark.parametrize(
    "expected, actual",
    [
        ("norm 1.000000e+00 sum=2.5e3", "norm 1.000200e+00 sum=2.5004e3"),  # 2e-4: FMA
        ("n 10 r 0.33333", "n 10 r 0.33"),  # 1e-2 at most
        ("x 0.0 y 100.0", "x 3e-10 y 100.5"),  # near zero: the absolute tolerance
    ],
)
def test_numbers_within_the_rounding_bound_are_rounding_only(expected: str, actual: str) -> None:
    assert compare(expected, actual) is not None  # rejected at the default 1e-4
    assert rounding_only(expected, actual)


@pytest.mark.parametrize(
    "expected, actual",
    [
        ("norm 1.0 count 10", "norm 1.0 count 11"),  # an integer differs: a real change
        ("norm 1.0", "norm 1.02"),  # beyond 1e-2
        ("label a 1.0", "label b 1.0"),  # text differs
        ("1.0 2.0", "1.0"),  # a token missing
        ("nan", "nan"),  # NaN is never right
    ],
)
def test_other_mismatches_are_not_rounding(expected: str, actual: str) -> None:
    assert not rounding_only(expected, actual)


def test_the_matched_tolerance_says_exact_or_within() -> None:
    assert ROUNDING_RTOL == 1e-2
    assert matched_tolerance("s 1.5 n 3", "s 1.50 n 3", 1e-4, 1e-9) == (0.0, 0.0)
    assert matched_tolerance("s 1.5 n 3", "s 1.50001 n 3", 1e-4, 1e-9) == (1e-4, 1e-9)
    assert matched_tolerance("s 1.5 n 3", "s 1.6 n 3", 1e-4, 1e-9) is None
