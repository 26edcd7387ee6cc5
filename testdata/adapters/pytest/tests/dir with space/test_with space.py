import os


def test_in_a_folder_with_a_space():
    pass


def test_env_from_the_suite_line(record_property):
    record_property("suite_env", os.environ.get("FIXTURE_SUITE_ENV", ""))
